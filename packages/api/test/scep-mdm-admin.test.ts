import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createCertificationRequest,
  createSelfSignedCertificate,
  generateKeyPair,
  type KeyAlgorithm,
  parseCertificationRequest,
  pemEncode,
} from '@certwright/core/pki';
import { MDM_CHALLENGE_STATUSES, mintScepChallenge } from '@certwright/protocols/scep';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * The admin routes of the SCEP device-management integration: per-status counters and the
 * trust reload with every status it answers (400, 404, 409, 500 with the anchors kept, 405).
 */

let app: TestApp;
let dir: string;
let trustFile: string;
let signer: Awaited<ReturnType<typeof identity>>;
let stranger: Awaited<ReturnType<typeof identity>>;
let devicesId: string;
const ENROLLMENT = {
  issuer_id: 'iss-local',
  owner_id: 'own-default',
  team_id: 'team-default',
  renewal_policy_id: 'rp-default',
};

async function identity(name: string, alg: KeyAlgorithm = 'ECDSA-P256') {
  const { privateKey } = await generateKeyPair(alg);
  const cert = createSelfSignedCertificate(
    {
      subject: `CN=${name},O=certwright tests`,
      notBefore: new Date('2025-06-01T00:00:00Z'),
      notAfter: new Date('2027-06-01T00:00:00Z'),
      keyUsage: ['digitalSignature'],
    },
    privateKey,
  );
  return { key: privateKey, der: cert.der, pem: pemEncode('CERTIFICATE', cert.der) };
}

beforeAll(async () => {
  app = await createTestApp();
  dir = await mkdtemp(join(tmpdir(), 'cw-scep-mdm-'));
  trustFile = join(dir, 'mdm.pem');
  signer = await identity('mdm signer');
  stranger = await identity('other mdm');
  await writeFile(trustFile, signer.pem);
  const root = await app.call('PUT', '/api/v1/profiles/prof-default', {
    scep: { enabled: true, mdm: { enabled: true, trust_bundle_path: trustFile } },
  });
  expect(root.status, JSON.stringify(root.body)).toBe(200);
  const devices = await app.call('POST', '/api/v1/profiles', {
    name: 'SCEP devices',
    enrollment: ENROLLMENT,
    scep: {
      enabled: true,
      path_id: 'devices',
      mdm: { enabled: true, trust_bundle_path: trustFile, audience: 'https://mdm.example.test/devices' },
    },
  });
  expect(devices.status, JSON.stringify(devices.body)).toBe(201);
  devicesId = devices.body.id;
  const plain = await app.call('POST', '/api/v1/profiles', {
    name: 'SCEP static',
    enrollment: ENROLLMENT,
    scep: { enabled: true, path_id: 'static' },
  });
  expect(plain.status).toBe(201);
}, 180_000);

afterAll(async () => {
  await app?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function csrWith(cn: string, challenge: string) {
  const { privateKey } = await generateKeyPair('ECDSA-P256');
  return parseCertificationRequest(
    createCertificationRequest({
      subject: [[{ type: '2.5.4.3', value: cn }]],
      privateKey,
      challengePassword: challenge,
    }),
  );
}

function mint(cn: string, by = signer, audience = 'urn:certwright:scep:prof-default') {
  return mintScepChallenge({
    key: by.key,
    certificate: by.der,
    audience,
    claims: { cn, compliant: true },
    now: app.clock.now(),
  });
}

async function checkOnRoot(cn: string, by = signer) {
  const profile = await app.servers.scep.mdm.profile(null);
  return app.servers.scep.mdm.check(profile, await csrWith(cn, mint(cn, by)), '192.0.2.10');
}

describe('GET /api/v1/admin/scep/mdm/stats', () => {
  it('lists every profile with the integration, all eleven labels, counting checks', async () => {
    const before = await app.call('GET', '/api/v1/admin/scep/mdm/stats');
    expect(before.status).toBe(200);
    expect(before.body.profile_count).toBe(2);
    expect(before.body.profiles.map((p: { profile_id: string }) => p.profile_id).sort()).toEqual(
      ['prof-default', devicesId].sort(),
    );
    const root = before.body.profiles.find((p: { profile_id: string }) => p.profile_id === 'prof-default');
    expect(Object.keys(root.counters)).toEqual([...MDM_CHALLENGE_STATUSES]);
    expect((await checkOnRoot('device-1')).status).toBe('success');
    expect((await checkOnRoot('device-2', stranger)).status).toBe('signature_invalid');
    const after = await app.call('GET', '/api/v1/admin/scep/mdm/stats');
    const now = after.body.profiles.find((p: { profile_id: string }) => p.profile_id === 'prof-default');
    expect(now.counters.success).toBe(root.counters.success + 1);
    expect(now.counters.signature_invalid).toBe(root.counters.signature_invalid + 1);
    expect(after.body.generated_at).toBe(app.clock.now().toISOString());
  });

  it('answers 405 to any other method', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      expect((await app.call(method, '/api/v1/admin/scep/mdm/stats', {})).status).toBe(405);
    }
  });

  it('is for administrators only', async () => {
    expect((await app.call('GET', '/api/v1/admin/scep/mdm/stats', undefined, { token: null })).status).toBe(
      401,
    );
  });
});

describe('POST /api/v1/admin/scep/mdm/reload-trust', () => {
  it('reloads the root profile for an empty body, and a profile by path id', async () => {
    const empty = await app.call('POST', '/api/v1/admin/scep/mdm/reload-trust');
    expect(empty.status, JSON.stringify(empty.body)).toBe(200);
    expect(empty.body).toMatchObject({
      profile_id: 'prof-default',
      path: trustFile,
      anchors: [{ subject: 'CN=mdm signer,O=certwright tests', not_after: '2027-06-01T00:00:00.000Z' }],
    });
    const byPath = await app.call('POST', '/api/v1/admin/scep/mdm/reload-trust', { path_id: 'devices' });
    expect(byPath.status).toBe(200);
    expect(byPath.body.profile_id).toBe(devicesId);
    const audit = await app.call('GET', `/api/v1/audit?action=scep_mdm_trust_reloaded&per_page=10`);
    expect(audit.body.total).toBeGreaterThanOrEqual(2);
  });

  it('answers 400 to a body that is not JSON', async () => {
    const res = await app.call('POST', '/api/v1/admin/scep/mdm/reload-trust', undefined, {
      raw: '{"path_id":',
    });
    expect(res.status).toBe(400);
  });

  it('answers 404 to an unknown path id', async () => {
    const res = await app.call('POST', '/api/v1/admin/scep/mdm/reload-trust', { path_id: 'nosuch' });
    expect(res.status).toBe(404);
  });

  it('answers 409 when the integration is not enabled on the profile', async () => {
    const res = await app.call('POST', '/api/v1/admin/scep/mdm/reload-trust', { path_id: 'static' });
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/not enabled/);
  });

  it('answers 500 for an invalid or unreadable file and keeps the previous anchors in force', async () => {
    expect((await checkOnRoot('device-3')).status).toBe('success');
    await writeFile(trustFile, 'not a PEM file');
    const invalid = await app.call('POST', '/api/v1/admin/scep/mdm/reload-trust', {});
    expect(invalid.status).toBe(500);
    expect(invalid.body.detail).toMatch(/previous anchors stay in force/);
    await rm(trustFile);
    const unreadable = await app.call('POST', '/api/v1/admin/scep/mdm/reload-trust', {});
    expect(unreadable.status).toBe(500);
    expect(unreadable.body.detail).toMatch(/cannot be read/);
    expect(unreadable.body.detail).not.toContain(dir);
    expect((await checkOnRoot('device-4')).status).toBe('success');
    await writeFile(trustFile, stranger.pem);
    expect((await app.call('POST', '/api/v1/admin/scep/mdm/reload-trust', {})).status).toBe(200);
    expect((await checkOnRoot('device-5')).status).toBe('signature_invalid');
    expect((await checkOnRoot('device-6', stranger)).status).toBe('success');
    await writeFile(trustFile, signer.pem);
    expect((await app.call('POST', '/api/v1/admin/scep/mdm/reload-trust', {})).status).toBe(200);
  });

  it('answers 405 to a GET', async () => {
    expect((await app.call('GET', '/api/v1/admin/scep/mdm/reload-trust')).status).toBe(405);
  });
});
