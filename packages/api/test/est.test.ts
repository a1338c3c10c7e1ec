import type { KeyObject } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ManualClock, TransportContext } from '@certwright/core';
import {
  certificateToPem,
  createCertificationRequest,
  createSelfSignedCertificate,
  derReader,
  exportSpkiDer,
  generateKeyPair,
  importPkcs8Der,
  issueCertificate,
  type KeyAlgorithm,
  openEnvelopedData,
  parseCertsOnly,
  prepareIssuer,
  readCertificate,
} from '@certwright/core/pki';
import { TLS_EXPORTER_LABEL } from '@certwright/protocols/est';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { conformance } from './support/openapi-conformance.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * The EST server (RFC 7030, RFC 8951) through the composed handler: routes, wire formats,
 * HTTP Basic, client certificates, channel binding, rate limits, audit codes and the admin
 * counters. Real TLS and real clients are in test/interop/est.test.ts.
 */

let app: TestApp;
let dir: string;
const PASSWORD = 'correct horse battery staple';
const EXPORTER = Buffer.alloc(32, 7);

beforeAll(async () => {
  app = await createTestApp({
    handler: { est: { rateLimit: { limit: 5, windowMs: 60_000 } }, rateLimits: { enrollment: 100_000 } },
  });
  dir = await mkdtemp(join(tmpdir(), 'cw-est-'));
  const put = await app.call('PUT', '/api/v1/profiles/prof-default', {
    est: { enabled: true, basic_credentials: [{ username: 'device', password: PASSWORD }] },
  });
  expect(put.status).toBe(200);
}, 180_000);
afterAll(async () => {
  await app?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});
// Every test starts a fresh per-principal window.
beforeEach(() => (app.clock as ManualClock).advance(61_000));

interface Send {
  body?: Uint8Array | string;
  basic?: [string, string];
  chain?: Uint8Array[];
  exporter?: Uint8Array;
  headers?: Record<string, string>;
}

async function est(method: string, path: string, options: Send = {}) {
  const headers = new Headers(options.headers);
  if (options.basic) {
    headers.set('authorization', `Basic ${Buffer.from(options.basic.join(':')).toString('base64')}`);
  }
  const transport: TransportContext = {
    remoteAddress: '127.0.0.1',
    tls: {
      protocol: 'TLSv1.3',
      clientCertificateChain: options.chain ?? [],
      exportKeyingMaterial: (length, label) => {
        expect(label).toBe(TLS_EXPORTER_LABEL);
        return (options.exporter ?? EXPORTER).subarray(0, length);
      },
    },
  };
  const body =
    typeof options.body === 'string' ? options.body : options.body ? new Uint8Array(options.body) : undefined;
  const response = await conformance.call(
    app.handler,
    new Request(`https://localhost:8443${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
    }),
    transport,
  );
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const device = (): [string, string] => ['device', PASSWORD];
const fromBase64 = (text: string) => Buffer.from(text.replace(/\s+/g, ''), 'base64');

async function csrFor(
  cn: string,
  alg: KeyAlgorithm = 'ECDSA-P256',
  extra: { challengePassword?: string } = {},
) {
  const keys = await generateKeyPair(alg);
  const der = createCertificationRequest({
    subject: `CN=${cn}`,
    privateKey: keys.privateKey,
    subjectAltNames: [{ type: 'dns', value: cn }],
    ...extra,
  });
  return { key: keys.privateKey, der };
}

const auditCount = async (action: string, profileId = 'prof-default') =>
  (await app.services.deps.storage.audit.list({ action, resource_id: profileId, page: 1, perPage: 1 })).total;

/** A CA outside the service, valid around the test clock, and a client certificate under it. */
async function foreignClient(name: string) {
  const now = app.clock.now().getTime();
  const caKeys = await generateKeyPair('ECDSA-P256');
  const ca = createSelfSignedCertificate(
    {
      subject: `CN=${name} CA`,
      notBefore: new Date(now - 86_400_000),
      notAfter: new Date(now + 3650 * 86_400_000),
      basicConstraints: { ca: true },
    },
    caKeys.privateKey,
  );
  const keys = await generateKeyPair('ECDSA-P256');
  const leaf = issueCertificate(
    {
      subject: `CN=${name}.devices.test`,
      publicKey: keys.publicKey,
      notBefore: new Date(now - 86_400_000),
      notAfter: new Date(now + 365 * 86_400_000),
      extendedKeyUsage: ['clientAuth'],
    },
    prepareIssuer(ca.der, caKeys.privateKey),
  );
  return { caPem: certificateToPem(ca.der), leaf: leaf.der, key: keys.privateKey };
}

async function enrollDevice(cn: string): Promise<{ key: KeyObject; cert: Buffer }> {
  const csr = await csrFor(cn);
  const res = await est('POST', '/.well-known/est/simpleenroll', {
    body: Buffer.from(csr.der).toString('base64'),
    basic: device(),
  });
  expect(res.status).toBe(200);
  const [cert] = parseCertsOnly(fromBase64(res.text));
  return { key: csr.key, cert: Buffer.from(cert!) };
}

describe('EST settings on profiles', () => {
  it('keeps Basic passwords write-only: the profile shows only that credentials are set, audit events only usernames', async () => {
    const { body } = await app.call('GET', '/api/v1/profiles/prof-default');
    expect(body.est).toEqual({
      enabled: true,
      path_id: null,
      server_keygen: false,
      mtls_trust_bundle_path: null,
      require_channel_binding: false,
      basic_credentials_set: true,
    });
    const audit = await app.call('GET', '/api/v1/audit?action=profile_updated&per_page=500');
    const text = JSON.stringify(audit.body);
    expect(text).toContain('device');
    expect(text).not.toContain(PASSWORD);
    const stored = await app.services.deps.storage.profiles.getWithSecrets('prof-default');
    expect(stored?.secrets.est?.basic_credentials).toMatch(/"password_hash":"scrypt\$/);
  });

  it('refuses a short password and a username with a colon, naming the field', async () => {
    const res = await app.call('PUT', '/api/v1/profiles/prof-default', {
      est: { basic_credentials: [{ username: 'a:b', password: 'short' }] },
    });
    expect(res.status).toBe(400);
    const fields = res.body.errors.map((e: { field: string }) => e.field);
    expect(fields).toContain('est.basic_credentials.0.username');
    expect(fields).toContain('est.basic_credentials.0.password');
  });

  it('answers 404 on every EST route of a profile with EST disabled or an unknown path id', async () => {
    const created = await app.call('POST', '/api/v1/profiles', { name: 'EST off', est: { path_id: 'off' } });
    expect(created.status).toBe(201);
    expect((await est('GET', '/.well-known/est/off/cacerts')).status).toBe(404);
    expect((await est('GET', '/.well-known/est/nosuch/cacerts')).status).toBe(404);
    expect(
      (await est('POST', '/.well-known/est/off/simpleenroll', { basic: device(), body: 'x' })).status,
    ).toBe(404);
  });
});

describe('cacerts and csrattrs', () => {
  it('serves the CA chain as base64 certs-only CMS without authentication', async () => {
    const res = await est('GET', '/.well-known/est/cacerts');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pkcs7-mime; smime-type=certs-only');
    expect(res.headers.get('content-transfer-encoding')).toBe('base64');
    expect(res.text).toMatch(/^([A-Za-z0-9+/=]{1,64}\r\n)+$/);
    const certs = parseCertsOnly(fromBase64(res.text));
    const chain = await app.services.pki.lifecycle.caChain('iss-local');
    expect(certs.map((c) => certificateToPem(c))).toEqual(chain);
  });

  it('answers 204 when the profile requires no CSR attribute', async () => {
    const res = await est('GET', '/.well-known/est/csrattrs');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
  });

  it("lists the profile's required attributes as OIDs and an extensionRequest", async () => {
    // A name csrattrs could not advertise is refused when the profile is written (profile-input.test.ts).
    const created = await app.call('POST', '/api/v1/profiles', {
      name: 'EST attrs',
      required_csr_attributes: ['CN', 'O', 'clientAuth', 'challengePassword'],
      enrollment: {
        issuer_id: 'iss-local',
        owner_id: 'own-default',
        team_id: 'team-default',
        renewal_policy_id: 'rp-default',
      },
      est: { enabled: true, path_id: 'attrs' },
    });
    expect(created.status).toBe(201);
    const res = await est('GET', '/.well-known/est/attrs/csrattrs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/csrattrs');
    const der = fromBase64(res.text);
    const items = derReader.children(der, derReader.readRoot(der));
    const oids = items.filter((n) => n.tag === 0x06).map((n) => derReader.readOid(der, n, 'oid'));
    expect(oids).toEqual(['2.5.4.3', '2.5.4.10', '1.2.840.113549.1.9.7']);
    const attribute = items.find((n) => n.tag === 0x30)!;
    const [type, values] = derReader.children(der, attribute);
    expect(derReader.readOid(der, type, 'type')).toBe('1.2.840.113549.1.9.14');
    expect(derReader.readOid(der, derReader.children(der, values!)[0], 'value')).toBe('2.5.29.37');
  });
});

describe('simpleenroll with HTTP Basic', () => {
  it('answers 401 with an empty body and a Basic challenge without credentials or with a wrong password', async () => {
    const csr = await csrFor('nobody.devices.test');
    const before = await auditCount('est_auth_failed_basic');
    for (const basic of [
      undefined,
      ['device', 'wrong password!!'] as [string, string],
      ['ghost', PASSWORD] as [string, string],
    ]) {
      const res = await est('POST', '/.well-known/est/simpleenroll', {
        body: csr.der,
        ...(basic ? { basic } : {}),
      });
      expect(res.status).toBe(401);
      expect(res.text).toBe('');
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm="certwright EST"/);
    }
    expect(await auditCount('est_auth_failed_basic')).toBe(before + 3);
    const listed = await app.services.deps.storage.certificates.list({ search: 'nobody.devices.test' });
    expect(listed.total).toBe(0);
  });

  it('enrolls base64 DER, PEM, CRLF-wrapped base64 with trailing newlines, and raw DER, into the inventory with source EST', async () => {
    const before = await auditCount('est_simple_enroll_success');
    const forms: ((der: Uint8Array) => Uint8Array | string)[] = [
      (der) => Buffer.from(der).toString('base64'),
      (der) =>
        `-----BEGIN CERTIFICATE REQUEST-----\n${Buffer.from(der).toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`,
      (der) =>
        `${(
          Buffer.from(der)
            .toString('base64')
            .match(/.{1,64}/g) ?? []
        ).join('\r\n')}\r\n\r\n`,
      (der) => der,
    ];
    for (const [i, form] of forms.entries()) {
      const cn = `form${i}.devices.test`;
      const csr = await csrFor(cn);
      const res = await est('POST', '/.well-known/est/simpleenroll', {
        body: form(csr.der),
        basic: device(),
        headers: { 'content-type': 'application/pkcs10' },
      });
      expect(res.status, res.text).toBe(200);
      const certs = parseCertsOnly(fromBase64(res.text));
      expect(certs).toHaveLength(1);
      const info = readCertificate(certs[0]!);
      expect(info.subject.text).toBe(`CN=${cn}`);
      expect(Buffer.from(info.spki)).toEqual(exportSpkiDer(csr.key));
      const listed = await app.services.deps.storage.certificates.list({ search: cn });
      expect(listed.items.map((c) => c.source)).toEqual(['EST']);
    }
    expect(await auditCount('est_simple_enroll_success')).toBe(before + 4);
  });

  it('answers 400 with a reason to garbage, truncated wrongly signed and oversized CSRs, and issues nothing', async () => {
    const csr = await csrFor('broken.devices.test');
    const tampered = Buffer.from(csr.der);
    tampered[tampered.length - 5]! ^= 0x01;
    const before = await auditCount('est_simple_enroll_failed');
    const cases: [Uint8Array | string, number, RegExp][] = [
      ['this is not a CSR', 400, /certificate request refused/],
      [csr.der.subarray(0, csr.der.length - 20), 400, /certificate request refused/],
      [tampered, 400, /signature|proof of possession/],
    ];
    for (const [body, status, message] of cases) {
      const res = await est('POST', '/.well-known/est/simpleenroll', { body, basic: device() });
      expect(res.status).toBe(status);
      expect(res.text).toMatch(message);
    }
    (app.clock as ManualClock).advance(61_000);
    const huge = await est('POST', '/.well-known/est/simpleenroll', {
      body: 'A'.repeat(200_000),
      basic: device(),
    });
    expect(huge.status).toBe(400);
    expect(huge.text).toMatch(/exceeds the limit/);
    expect(await auditCount('est_simple_enroll_failed')).toBe(before + 3);
    const listed = await app.services.deps.storage.certificates.list({ search: 'broken.devices.test' });
    expect(listed.total).toBe(0);
  });

  it('refuses a CSR for a key the profile forbids and audits est_csr_policy_violation', async () => {
    const created = await app.call('POST', '/api/v1/profiles', {
      name: 'EST RSA only',
      allowed_key_algorithms: [{ algorithm: 'RSA', sizes: [3072] }],
      enrollment: {
        issuer_id: 'iss-local',
        owner_id: 'own-default',
        team_id: 'team-default',
        renewal_policy_id: 'rp-default',
      },
      est: {
        enabled: true,
        path_id: 'rsa-only',
        basic_credentials: [{ username: 'device', password: PASSWORD }],
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const csr = await csrFor('p256.devices.test');
    const res = await est('POST', '/.well-known/est/rsa-only/simpleenroll', {
      body: csr.der,
      basic: device(),
    });
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/not allowed/);
    expect(await auditCount('est_csr_policy_violation', id)).toBe(1);
    expect(await auditCount('est_simple_enroll_failed', id)).toBe(1);
  });

  it('answers 429 with Retry-After once a principal exceeds its limit, and audits est_rate_limited', async () => {
    for (let i = 0; i < 5; i++) {
      expect(
        (await est('POST', '/.well-known/est/simpleenroll', { body: 'garbage', basic: device() })).status,
      ).toBe(400);
    }
    const before = await auditCount('est_rate_limited');
    const res = await est('POST', '/.well-known/est/simpleenroll', { body: 'garbage', basic: device() });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await auditCount('est_rate_limited')).toBe(before + 1);
  });
});

describe('simplereenroll with the TLS client certificate', () => {
  it('issues a new version of the same managed certificate for a CSR with a new key and the same names', async () => {
    const first = await enrollDevice('renew.devices.test');
    const version = await app.services.deps.storage.versions.findBySerial(
      'iss-local',
      readCertificate(first.cert).serialNumber,
    );
    const next = await csrFor('renew.devices.test');
    const res = await est('POST', '/.well-known/est/simplereenroll', { body: next.der, chain: [first.cert] });
    expect(res.status, res.text).toBe(200);
    const [renewed] = parseCertsOnly(fromBase64(res.text));
    const info = readCertificate(renewed!);
    expect(Buffer.from(info.spki)).toEqual(exportSpkiDer(next.key));
    const renewedVersion = await app.services.deps.storage.versions.findBySerial(
      'iss-local',
      info.serialNumber,
    );
    expect(renewedVersion?.certificate_id).toBe(version?.certificate_id);
    expect(await auditCount('est_simple_reenroll_success')).toBeGreaterThan(0);
  });

  it('refuses re-enrollment without a client certificate, with a certificate of another CA, or for other names', async () => {
    const first = await enrollDevice('strict.devices.test');
    const csr = await csrFor('strict.devices.test');
    const before = await auditCount('est_auth_failed_mtls');
    const none = await est('POST', '/.well-known/est/simplereenroll', { body: csr.der });
    expect(none.status).toBe(403);
    expect(await auditCount('est_auth_failed_mtls')).toBe(before + 1);
    const foreign = await foreignClient('strict');
    const other = await est('POST', '/.well-known/est/simplereenroll', {
      body: csr.der,
      chain: [foreign.leaf],
    });
    expect(other.status).toBe(403);
    expect(other.text).toMatch(/not issued by this profile's CA/);
    const renamed = await csrFor('other.devices.test');
    const mismatch = await est('POST', '/.well-known/est/simplereenroll', {
      body: renamed.der,
      chain: [first.cert],
    });
    expect(mismatch.status).toBe(403);
    expect(mismatch.text).toMatch(/subject differs/);
    expect(await auditCount('est_simple_reenroll_failed')).toBeGreaterThanOrEqual(2);
  });
});

describe('EST certificates in the inventory', () => {
  it('are selected by the EST bulk revoke, and a revoked certificate can no longer re-enroll', async () => {
    const enrolled = await enrollDevice('revoked.devices.test');
    const version = await app.services.deps.storage.versions.findBySerial(
      'iss-local',
      readCertificate(enrolled.cert).serialNumber,
    );
    const revoked = await app.call('POST', '/api/v1/est/certificates/bulk-revoke', {
      certificate_ids: [version!.certificate_id],
      reason: 'keyCompromise',
    });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ total_matched: 1, total_revoked: 1 });
    const next = await csrFor('revoked.devices.test');
    const res = await est('POST', '/.well-known/est/simplereenroll', {
      body: next.der,
      chain: [enrolled.cert],
    });
    expect(res.status).toBe(403);
    expect(res.text).toMatch(/revoked/);
  });
});

describe('the mutual-TLS routes', () => {
  it("accepts a client whose certificate chains to the profile's bundle and refuses a foreign one with est_auth_failed_mtls", async () => {
    const trusted = await foreignClient('fleet');
    const stranger = await foreignClient('stranger');
    const bundle = join(dir, 'fleet.pem');
    await writeFile(bundle, trusted.caPem);
    const created = await app.call('POST', '/api/v1/profiles', {
      name: 'EST fleet',
      enrollment: {
        issuer_id: 'iss-local',
        owner_id: 'own-default',
        team_id: 'team-default',
        renewal_policy_id: 'rp-default',
      },
      est: { enabled: true, path_id: 'fleet', mtls_trust_bundle_path: bundle },
    });
    expect(created.status).toBe(201);
    const csr = await csrFor('fleet1.devices.test');
    const ok = await est('POST', '/.well-known/est-mtls/fleet/simpleenroll', {
      body: csr.der,
      chain: [trusted.leaf],
    });
    expect(ok.status, ok.text).toBe(200);
    const refused = await est('POST', '/.well-known/est-mtls/fleet/simpleenroll', {
      body: csr.der,
      chain: [stranger.leaf],
    });
    expect(refused.status).toBe(403);
    const bare = await est('POST', '/.well-known/est-mtls/fleet/simpleenroll', { body: csr.der });
    expect(bare.status).toBe(403);
    expect(await auditCount('est_auth_failed_mtls', created.body.id)).toBe(2);

    // A broken file on reload keeps the anchors in force; a good one is audited.
    await writeFile(bundle, 'not a bundle');
    const bad = await app.call('POST', '/api/v1/admin/est/reload-trust', { path_id: 'fleet' });
    expect(bad.status).toBe(500);
    expect(bad.body.detail).toMatch(/previous anchors stay in force/);
    const still = await est('POST', '/.well-known/est-mtls/fleet/simpleenroll', {
      body: csr.der,
      chain: [trusted.leaf],
    });
    expect(still.status).toBe(200);
    await writeFile(bundle, trusted.caPem + stranger.caPem);
    const good = await app.call('POST', '/api/v1/admin/est/reload-trust', { path_id: 'fleet' });
    expect(good.status).toBe(200);
    expect(good.body.reloaded).toEqual([{ profile_id: created.body.id, path: bundle, anchors: 2 }]);
    expect(await auditCount('est_trust_anchor_reloaded', created.body.id)).toBe(1);
    const now = await est('POST', '/.well-known/est-mtls/fleet/simpleenroll', {
      body: csr.der,
      chain: [stranger.leaf],
    });
    expect(now.status).toBe(200);
  });
});

describe('serverkeygen', () => {
  it('answers 404 while server key generation is disabled on the profile', async () => {
    const csr = await csrFor('keygen-off.devices.test', 'RSA-2048');
    const res = await est('POST', '/.well-known/est/serverkeygen', { body: csr.der, basic: device() });
    expect(res.status).toBe(404);
  });

  it('returns multipart/mixed with a random boundary: the PKCS#8 key enveloped to the CSR key, and the certificate with its chain', async () => {
    await app.call('PUT', '/api/v1/profiles/prof-default', { est: { server_keygen: true } });
    const csr = await csrFor('keygen.devices.test', 'RSA-2048');
    const res = await est('POST', '/.well-known/est/serverkeygen', { body: csr.der, basic: device() });
    expect(res.status, res.text).toBe(200);
    const boundary = /boundary=([^;]+)$/.exec(res.headers.get('content-type') ?? '')?.[1];
    expect(boundary).toMatch(/^est-[A-Za-z0-9_-]{24}$/);
    const again = await est('POST', '/.well-known/est/serverkeygen', { body: csr.der, basic: device() });
    expect(again.headers.get('content-type')).not.toBe(res.headers.get('content-type'));
    const parts = res.text
      .split(`--${boundary}`)
      .slice(1, -1)
      .map((p) => {
        const [head, body] = p.split('\r\n\r\n');
        return { head: head!, der: fromBase64(body!) };
      });
    expect(parts).toHaveLength(2);
    expect(parts[0]!.head).toMatch(/smime-type=server-generated-key/);
    expect(parts[1]!.head).toMatch(/smime-type=certs-only/);
    const pkcs8 = openEnvelopedData(parts[0]!.der, { privateKey: csr.key });
    const key = importPkcs8Der(pkcs8);
    const certs = parseCertsOnly(parts[1]!.der);
    expect(certs.length).toBeGreaterThan(1);
    const leaf = readCertificate(certs[0]!);
    expect(Buffer.from(leaf.spki)).toEqual(exportSpkiDer(key));
    expect(leaf.publicKey).toMatchObject({ type: 'RSA', bits: 2048 });
    expect(leaf.subject.text).toBe('CN=keygen.devices.test');
    expect(await auditCount('est_server_keygen_success')).toBe(2);
  });

  it('refuses an EC CSR (no key-transport recipient) with 400 and est_server_keygen_failed, not a policy violation', async () => {
    const csr = await csrFor('keygen-ec.devices.test', 'ECDSA-P256');
    const policy = await auditCount('est_csr_policy_violation');
    const res = await est('POST', '/.well-known/est/serverkeygen', { body: csr.der, basic: device() });
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/RSA public key/);
    expect(await auditCount('est_server_keygen_failed')).toBe(1);
    expect(await auditCount('est_csr_policy_violation')).toBe(policy);
  });
});

describe('channel binding (RFC 9266 tls-exporter)', () => {
  it('accepts the exporter value in challengePassword and refuses another with est_auth_failed_channel_binding', async () => {
    await app.call('PUT', '/api/v1/profiles/prof-default', { est: { require_channel_binding: true } });
    try {
      const bound = await csrFor('bound.devices.test', 'ECDSA-P256', {
        challengePassword: EXPORTER.toString('base64'),
      });
      const ok = await est('POST', '/.well-known/est/simpleenroll', { body: bound.der, basic: device() });
      expect(ok.status, ok.text).toBe(200);
      const before = await auditCount('est_auth_failed_channel_binding');
      const wrong = await est('POST', '/.well-known/est/simpleenroll', {
        body: bound.der,
        basic: device(),
        exporter: Buffer.alloc(32, 9),
      });
      expect(wrong.status).toBe(403);
      const unbound = await csrFor('unbound.devices.test');
      expect(
        (await est('POST', '/.well-known/est/simpleenroll', { body: unbound.der, basic: device() })).status,
      ).toBe(403);
      expect(await auditCount('est_auth_failed_channel_binding')).toBe(before + 2);
    } finally {
      await app.call('PUT', '/api/v1/profiles/prof-default', { est: { require_channel_binding: false } });
    }
  });
});

describe('admin', () => {
  it('shows twelve named counters per EST profile that follow the audited events', async () => {
    const read = async () => {
      const res = await app.call('GET', '/api/v1/admin/est/profiles');
      expect(res.status).toBe(200);
      return res.body.profiles.find((p: { profile_id: string }) => p.profile_id === 'prof-default');
    };
    const before = await read();
    expect(Object.keys(before.counters)).toHaveLength(12);
    await enrollDevice('counted.devices.test');
    await est('POST', '/.well-known/est/simpleenroll', { body: 'x', basic: ['device', 'nope nope nope'] });
    const after = await read();
    expect(after.counters.simple_enroll_success).toBe(before.counters.simple_enroll_success + 1);
    expect(after.counters.auth_failed_basic).toBe(before.counters.auth_failed_basic + 1);
  });
});
