import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ManualClock, TransportContext } from '@certwright/core';
import {
  buildScepRequest,
  createCertificationRequest,
  createSelfSignedCertificate,
  generateKeyPair,
  issuerAndSerialOf,
  parseCertsOnly,
  readCertificate,
  readCertRep,
} from '@certwright/core/pki';
import { scepFailInfo } from '@certwright/protocols/scep';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postQuantumSkip, printPostQuantumSkip } from '../../core/test/pki/post-quantum-support.js';
import { conformance } from './support/openapi-conformance.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * The SCEP server (RFC 8894) through the composed handler, with certwright's own client
 * helpers: operations, CertRep SUCCESS and FAILURE with the failInfo of each refusal, polls,
 * replay, the mutual-TLS route and the admin snapshot. Real clients are in
 * test/interop/scep.test.ts.
 */

printPostQuantumSkip('scep.test.ts');

let app: TestApp;
let dir: string;
const CHALLENGE = 'scep test challenge';

beforeAll(async () => {
  app = await createTestApp({ handler: { rateLimits: { enrollment: 100_000 } } });
  dir = await mkdtemp(join(tmpdir(), 'cw-scep-'));
  const put = await app.call('PUT', '/api/v1/profiles/prof-default', {
    scep: { enabled: true, challenge_password: CHALLENGE },
  });
  expect(put.status).toBe(200);
}, 180_000);
afterAll(async () => {
  await app?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function scep(method: string, path: string, body?: Uint8Array, chain: Uint8Array[] = []) {
  const transport: TransportContext = {
    remoteAddress: '127.0.0.1',
    tls: {
      protocol: 'TLSv1.3',
      clientCertificateChain: chain,
      exportKeyingMaterial: () => new Uint8Array(32),
    },
  };
  const response = await conformance.call(
    app.handler,
    new Request(`https://localhost:8443${path}`, {
      method,
      ...(body
        ? { body: new Uint8Array(body), headers: { 'content-type': 'application/x-pki-message' } }
        : {}),
    }),
    transport,
  );
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    body: Buffer.from(await response.arrayBuffer()),
  };
}

async function raCertificate(path = '/scep'): Promise<Buffer> {
  const res = await scep('GET', `${path}?operation=GetCACert`);
  expect(res.status).toBe(200);
  const certs = parseCertsOnly(res.body);
  return Buffer.from(certs[certs.length - 1]!);
}

interface Device {
  key: Awaited<ReturnType<typeof generateKeyPair>>;
  self: Buffer;
  csr: Buffer;
}

async function device(cn: string, challenge: string | null = CHALLENGE): Promise<Device> {
  const key = await generateKeyPair('RSA-2048');
  const now = app.clock.now();
  const self = createSelfSignedCertificate(
    {
      subject: [{ type: 'CN', value: cn }],
      notBefore: new Date(now.getTime() - 60_000),
      notAfter: new Date(now.getTime() + 86_400_000),
    },
    key.privateKey,
  ).der;
  const csr = createCertificationRequest({
    subject: [{ type: 'CN', value: cn }],
    privateKey: key.privateKey,
    ...(challenge === null ? {} : { challengePassword: challenge }),
  });
  return { key, self, csr };
}

function message(
  d: Device,
  ra: Buffer,
  extra: Partial<Parameters<typeof buildScepRequest>[0]> = {},
): { der: Buffer; transactionId: string } {
  const transactionId = extra.transactionId ?? randomBytes(8).toString('hex');
  return {
    transactionId,
    der: buildScepRequest({
      messageType: 'PKCSReq',
      transactionId,
      senderNonce: randomBytes(16),
      content: d.csr,
      signer: { certificate: d.self, privateKey: d.key.privateKey },
      recipient: ra,
      ...extra,
    }),
  };
}

const reply = (body: Buffer, ra: Buffer, d: Device, certificate = d.self) =>
  readCertRep(body, { ra, requester: { certificate, privateKey: d.key.privateKey } });

const scepCount = async () => (await app.services.certificates.list({ source: 'SCEP', per_page: 1 })).total;

describe('SCEP operations', () => {
  it('GetCACaps advertises what is implemented; GetCACert is CA chain then RA; unknown profile 404', async () => {
    const caps = await scep('GET', '/scep?operation=GetCACaps');
    expect(caps.status).toBe(200);
    expect(caps.body.toString().trim().split('\n')).toEqual([
      'AES',
      'POSTPKIOperation',
      'Renewal',
      'SCEPStandard',
      'SHA-256',
      'SHA-512',
    ]);
    const ca = await scep('GET', '/scep/?operation=GetCACert');
    expect(ca.type).toBe('application/x-x509-ca-ra-cert');
    const certs = parseCertsOnly(ca.body).map((c) => readCertificate(c));
    expect(certs.at(-1)!.subject.text).toContain('SCEP RA prof-default');
    expect(certs[0]!.subject.text).toContain('Issuing CA');
    expect((await scep('GET', '/scep/nope?operation=GetCACaps')).status).toBe(404);
    expect((await scep('GET', '/scep?operation=Bogus')).status).toBe(400);
    expect((await scep('PUT', '/scep?operation=GetCACaps')).status).toBe(405);
  });

  it('GetCACaps and GetCACert see a profile change at once (their profile lookup is reused only while nothing changed)', async () => {
    const created = await app.call('POST', '/api/v1/profiles', {
      name: 'SCEP lookup',
      enrollment: {
        issuer_id: 'iss-local',
        owner_id: 'own-default',
        team_id: 'team-default',
        renewal_policy_id: 'rp-default',
      },
      scep: { enabled: true, path_id: 'lookup', challenge_password: CHALLENGE },
    });
    expect(created.status).toBe(201);
    expect((await scep('GET', '/scep/lookup?operation=GetCACaps')).status).toBe(200);
    const first = await scep('GET', '/scep/lookup?operation=GetCACert');
    expect(first.status).toBe(200);
    expect((await scep('GET', '/scep/lookup?operation=GetCACert')).body.equals(first.body)).toBe(true);
    const off = await app.call('PUT', `/api/v1/profiles/${created.body.id}`, { scep: { enabled: false } });
    expect(off.status).toBe(200);
    expect((await scep('GET', '/scep/lookup?operation=GetCACaps')).status).toBe(404);
    expect((await scep('GET', '/scep/lookup?operation=GetCACert')).status).toBe(404);
    const on = await app.call('PUT', `/api/v1/profiles/${created.body.id}`, { scep: { enabled: true } });
    expect(on.status).toBe(200);
    const again = await scep('GET', '/scep/lookup?operation=GetCACert');
    expect(again.status).toBe(200);
    expect(again.body.equals(first.body)).toBe(true);
  });

  it('PKIOperation sees a changed challenge password and a disabled SCEP block at once (its profile lookup is reused only while nothing changed)', async () => {
    const created = await app.call('POST', '/api/v1/profiles', {
      name: 'SCEP operation lookup',
      enrollment: {
        issuer_id: 'iss-local',
        owner_id: 'own-default',
        team_id: 'team-default',
        renewal_policy_id: 'rp-default',
      },
      scep: { enabled: true, path_id: 'oplookup', challenge_password: CHALLENGE },
    });
    expect(created.status).toBe(201);
    const path = '/scep/oplookup?operation=PKIOperation';
    const ra = await raCertificate('/scep/oplookup');
    const first = await device('first.oplookup.test');
    expect(reply((await scep('POST', path, message(first, ra).der)).body, ra, first).status).toBe('SUCCESS');
    const changed = await app.call('PUT', `/api/v1/profiles/${created.body.id}`, {
      scep: { challenge_password: 'another challenge' },
    });
    expect(changed.status).toBe(200);
    const old = await device('old.oplookup.test');
    expect(reply((await scep('POST', path, message(old, ra).der)).body, ra, old)).toMatchObject({
      status: 'FAILURE',
      failInfo: 'badRequest',
    });
    const fresh = await device('new.oplookup.test', 'another challenge');
    expect(reply((await scep('POST', path, message(fresh, ra).der)).body, ra, fresh).status).toBe('SUCCESS');
    const off = await app.call('PUT', `/api/v1/profiles/${created.body.id}`, { scep: { enabled: false } });
    expect(off.status).toBe(200);
    const late = await device('late.oplookup.test', 'another challenge');
    expect((await scep('POST', path, message(late, ra).der)).status).toBe(404);
  });

  it('PKCSReq over POST and over GET: SUCCESS with the certificate, in the inventory as SCEP, audited', async () => {
    const ra = await raCertificate();
    const d = await device('post.scep.test');
    const res = await scep('POST', '/scep?operation=PKIOperation', message(d, ra).der);
    expect(res.type).toBe('application/x-pki-message');
    const rep = reply(res.body, ra, d);
    expect(rep.status).toBe('SUCCESS');
    const cert = readCertificate(rep.certificates[0]!);
    expect(cert.subject.text).toBe('CN=post.scep.test');
    const g = await device('get.scep.test');
    const m = message(g, ra);
    const get = await scep(
      'GET',
      `/scep?operation=PKIOperation&message=${encodeURIComponent(m.der.toString('base64'))}`,
    );
    expect(reply(get.body, ra, g).status).toBe('SUCCESS');
    const listed = await app.services.certificates.list({ source: 'SCEP', per_page: 50 });
    expect(listed.data.map((c) => c.common_name)).toEqual(
      expect.arrayContaining(['post.scep.test', 'get.scep.test']),
    );
    const audit = await app.storage.audit.list({ action: 'scep_pkcsreq', page: 1, perPage: 50 });
    expect(
      audit.items.filter((e) => (e.details as { outcome: string }).outcome === 'success').length,
    ).toBeGreaterThanOrEqual(2);
  });

  it('CertPoll: a known transaction answers its result again; an unknown one is badCertId', async () => {
    const ra = await raCertificate();
    const d = await device('poll.scep.test');
    const first = message(d, ra);
    const issued = reply((await scep('POST', '/scep?operation=PKIOperation', first.der)).body, ra, d);
    expect(issued.status).toBe('SUCCESS');
    const subject = readCertificate(d.self);
    const poll = message(d, ra, {
      messageType: 'CertPoll',
      transactionId: first.transactionId,
      content: issuerAndSerialOf(d.self),
    });
    const again = reply((await scep('POST', '/scep?operation=PKIOperation', poll.der)).body, ra, d);
    expect(again.status).toBe('SUCCESS');
    expect(Buffer.from(again.certificates[0]!)).toEqual(Buffer.from(issued.certificates[0]!));
    expect(subject.subject.text).toBe('CN=poll.scep.test');
    const unknown = message(d, ra, { messageType: 'CertPoll', content: issuerAndSerialOf(d.self) });
    const rep = reply((await scep('POST', '/scep?operation=PKIOperation', unknown.der)).body, ra, d);
    expect(rep).toMatchObject({ status: 'FAILURE', failInfo: 'badCertId' });
  });

  it('PKCSReq resent under its transactionID with a new nonce: the certificate of the transaction again, nothing issued twice', async () => {
    const ra = await raCertificate();
    const before = await scepCount();
    const d = await device('resent.scep.test');
    const first = message(d, ra);
    const issued = reply((await scep('POST', '/scep?operation=PKIOperation', first.der)).body, ra, d);
    expect(issued.status).toBe('SUCCESS');
    expect(await scepCount()).toBe(before + 1);
    // RFC 8894 §3.3.1.2: the same request again (a client that lost the reply), a fresh senderNonce.
    const resent = message(d, ra, { transactionId: first.transactionId });
    expect(resent.der.equals(first.der)).toBe(false);
    const again = reply((await scep('POST', '/scep?operation=PKIOperation', resent.der)).body, ra, d);
    expect(again.status).toBe('SUCCESS');
    expect(Buffer.from(again.certificates[0]!)).toEqual(Buffer.from(issued.certificates[0]!));
    expect(await scepCount()).toBe(before + 1);
    const audited = await app.storage.audit.list({ action: 'scep_pkcsreq', page: 1, perPage: 500 });
    const ofTransaction = audited.items.filter(
      (e) => (e.details as { transaction_id?: string }).transaction_id === first.transactionId,
    );
    expect(ofTransaction).toHaveLength(1);

    // Another signer cannot collect it by naming the transaction.
    const stranger = await device('resent.scep.test');
    const foreign = message(stranger, ra, { transactionId: first.transactionId, content: d.csr });
    const theirs = reply(
      (await scep('POST', '/scep?operation=PKIOperation', foreign.der)).body,
      ra,
      stranger,
    );
    expect(theirs.status).toBe('SUCCESS');
    expect(Buffer.from(theirs.certificates[0]!)).not.toEqual(Buffer.from(issued.certificates[0]!));
    expect(await scepCount()).toBe(before + 2);

    // A different request under the same transactionID is judged and issued anew.
    const other = createCertificationRequest({
      subject: [{ type: 'CN', value: 'resent-other.scep.test' }],
      privateKey: d.key.privateKey,
      challengePassword: CHALLENGE,
    });
    const changed = message(d, ra, { transactionId: first.transactionId, content: other });
    const second = reply((await scep('POST', '/scep?operation=PKIOperation', changed.der)).body, ra, d);
    expect(second.status).toBe('SUCCESS');
    expect(readCertificate(second.certificates[0]!).subject.text).toBe('CN=resent-other.scep.test');
    expect(await scepCount()).toBe(before + 3);
  });
});

describe('SCEP refusals: CertRep FAILURE with the failInfo, nothing issued', () => {
  it('wrong or missing challenge: badRequest, audited as a failed scep_pkcsreq', async () => {
    const ra = await raCertificate();
    const before = await scepCount();
    for (const challenge of ['not the challenge', null]) {
      const d = await device('wrong.scep.test', challenge);
      const rep = reply((await scep('POST', '/scep?operation=PKIOperation', message(d, ra).der)).body, ra, d);
      expect(rep).toMatchObject({ status: 'FAILURE', failInfo: 'badRequest' });
    }
    expect(await scepCount()).toBe(before);
    const audit = await app.storage.audit.list({ action: 'scep_pkcsreq', page: 1, perPage: 100 });
    expect(audit.items.some((e) => (e.details as { reason?: string }).reason === 'unauthenticated')).toBe(
      true,
    );
    expect(JSON.stringify(audit.items)).not.toContain('not the challenge');
  });

  it('replayed message: badRequest; wrong recipient and bad signature: badMessageCheck; old signingTime: badTime', async () => {
    const ra = await raCertificate();
    const before = await scepCount();
    const d = await device('replay.scep.test');
    const m = message(d, ra);
    expect(reply((await scep('POST', '/scep?operation=PKIOperation', m.der)).body, ra, d).status).toBe(
      'SUCCESS',
    );
    const replay = reply((await scep('POST', '/scep?operation=PKIOperation', m.der)).body, ra, d);
    expect(replay).toMatchObject({ status: 'FAILURE', failInfo: 'badRequest' });
    expect(await scepCount()).toBe(before + 1);
    // The replay left the transaction's result alone: a poll still answers the certificate.
    const poll = message(d, ra, {
      messageType: 'CertPoll',
      transactionId: m.transactionId,
      content: issuerAndSerialOf(d.self),
    });
    expect(reply((await scep('POST', '/scep?operation=PKIOperation', poll.der)).body, ra, d).status).toBe(
      'SUCCESS',
    );

    const other = await device('other-recipient.scep.test');
    const wrong = await device('wrong-recipient.scep.test');
    const toOther = message(wrong, other.self);
    const rep1 = reply((await scep('POST', '/scep?operation=PKIOperation', toOther.der)).body, ra, wrong);
    expect(rep1).toMatchObject({ status: 'FAILURE', failInfo: 'badMessageCheck' });

    const tampered = Buffer.from(message(await device('sig.scep.test'), ra).der);
    tampered[tampered.length - 1]! ^= 0x01; // the signature is the message's last field
    const sigDevice = await device('sig2.scep.test');
    const res = await scep('POST', '/scep?operation=PKIOperation', tampered);
    expect(res.status).toBe(200);
    // The reply is to the (unverified) signer; read it with the RA alone.
    expect(() => reply(res.body, ra, sigDevice)).not.toThrow();
    expect(reply(res.body, ra, sigDevice)).toMatchObject({ status: 'FAILURE', failInfo: 'badMessageCheck' });

    const late = await device('late.scep.test');
    const old = message(late, ra, { signingTime: new Date(app.clock.now().getTime() - 3 * 86_400_000) });
    const rep3 = reply((await scep('POST', '/scep?operation=PKIOperation', old.der)).body, ra, late);
    expect(rep3).toMatchObject({ status: 'FAILURE', failInfo: 'badTime' });
    expect(await scepCount()).toBe(before + 1);
  });

  it.skipIf(postQuantumSkip !== undefined)(
    'a post-quantum key in the request: badAlg, the audit saying SCEP needs an RSA key',
    async () => {
      const ra = await raCertificate();
      const before = await scepCount();
      const d = await device('pq.scep.test');
      const pq = await generateKeyPair('ML-DSA-44');
      const csr = createCertificationRequest({
        subject: [{ type: 'CN', value: 'pq.scep.test' }],
        privateKey: pq.privateKey,
        challengePassword: CHALLENGE,
      });
      const res = await scep('POST', '/scep?operation=PKIOperation', message({ ...d, csr }, ra).der);
      expect(reply(res.body, ra, d)).toMatchObject({ status: 'FAILURE', failInfo: 'badAlg' });
      expect(await scepCount()).toBe(before);
      const audit = await app.storage.audit.list({ action: 'scep_pkcsreq', page: 1, perPage: 100 });
      expect(JSON.stringify(audit.items)).toContain('SCEP needs an RSA key');
    },
  );

  it('RenewalReq signed by a certificate this server did not issue: badCertId', async () => {
    const ra = await raCertificate();
    const d = await device('renew-foreign.scep.test', null);
    const rep = reply(
      (await scep('POST', '/scep?operation=PKIOperation', message(d, ra, { messageType: 'RenewalReq' }).der))
        .body,
      ra,
      d,
    );
    expect(rep).toMatchObject({ status: 'FAILURE', failInfo: 'badCertId' });
  });

  it('RenewalReq signed by the current certificate: a new version of the same managed certificate', async () => {
    const ra = await raCertificate();
    const d = await device('renew.scep.test');
    const first = reply((await scep('POST', '/scep?operation=PKIOperation', message(d, ra).der)).body, ra, d);
    const current = Buffer.from(first.certificates[0]!);
    const renewal = await device('renew.scep.test', null);
    const req = buildScepRequest({
      messageType: 'RenewalReq',
      transactionId: randomBytes(8).toString('hex'),
      senderNonce: randomBytes(16),
      content: renewal.csr,
      signer: { certificate: current, privateKey: d.key.privateKey },
      recipient: ra,
    });
    const rep = readCertRep((await scep('POST', '/scep?operation=PKIOperation', req)).body, {
      ra,
      requester: { certificate: current, privateKey: d.key.privateKey },
    });
    expect(rep.status).toBe('SUCCESS');
    const next = readCertificate(rep.certificates[0]!);
    expect(next.serialNumber).not.toBe(readCertificate(current).serialNumber);
    const version = await app.storage.versions.findBySerial('iss-local', next.serialNumber);
    const previous = await app.storage.versions.findBySerial(
      'iss-local',
      readCertificate(current).serialNumber,
    );
    expect(version?.certificate_id).toBe(previous?.certificate_id);
    const audit = await app.storage.audit.list({ action: 'scep_renewalreq', page: 1, perPage: 10 });
    expect(audit.items.length).toBeGreaterThan(0);
  });

  it('garbage and truncated bodies are 400 (no CertRep can be formed), nothing issued', async () => {
    const before = await scepCount();
    const ra = await raCertificate();
    const good = message(await device('trunc.scep.test'), ra).der;
    for (const body of [
      Buffer.from('not a pki message'),
      good.subarray(0, good.length / 2),
      Buffer.alloc(0),
    ]) {
      const res = await scep('POST', '/scep?operation=PKIOperation', body);
      expect(res.status).toBe(400);
      expect(res.body.toString()).not.toMatch(/at .*\.ts|stack/);
    }
    expect((await scep('GET', '/scep?operation=PKIOperation&message=***')).status).toBe(400);
    expect((await scep('POST', '/scep?operation=PKIOperation', Buffer.alloc(300 * 1024, 0x30))).status).toBe(
      413,
    );
    expect(await scepCount()).toBe(before);
  });

  it('the failInfo of every refusal reason (RFC 8894 §3.2.1.4)', () => {
    expect(scepFailInfo('signature_algorithm_not_allowed')).toBe('badAlg');
    expect(scepFailInfo('signature_invalid')).toBe('badMessageCheck');
    expect(scepFailInfo('time_invalid')).toBe('badTime');
    expect(scepFailInfo('not_found')).toBe('badCertId');
    expect(scepFailInfo('unauthenticated')).toBe('badRequest');
    expect(scepFailInfo('duplicate')).toBe('badRequest');
  });
});

describe('SCEP mutual TLS and administration', () => {
  it('the -mtls route needs a client certificate from the profile bundle: 403 without, SUCCESS with', async () => {
    // The bundle is the local CA; the client certificate one it issued over plain SCEP.
    const chain = await app.services.pki.lifecycle.caChain('iss-local');
    const bundle = join(dir, 'scep-bundle.pem');
    await writeFile(bundle, chain.join(''));
    const rootRa = await raCertificate();
    const holder = await device('mtls-client.scep.test');
    const issued = reply(
      (await scep('POST', '/scep?operation=PKIOperation', message(holder, rootRa).der)).body,
      rootRa,
      holder,
    );
    const clientChain = [
      Buffer.from(issued.certificates[0]!),
      ...parseCertsOnly((await scep('GET', '/scep?operation=GetCACert')).body).slice(0, 1),
    ];
    const created = await app.call('POST', '/api/v1/profiles', {
      name: 'SCEP fleet',
      enrollment: {
        issuer_id: 'iss-local',
        owner_id: 'own-default',
        team_id: 'team-default',
        renewal_policy_id: 'rp-default',
      },
      scep: {
        enabled: true,
        path_id: 'fleet',
        challenge_password: CHALLENGE,
        mtls_trust_bundle_path: bundle,
      },
    });
    expect(created.status).toBe(201);
    const ra = await raCertificate('/scep-mtls/fleet');
    expect(ra.equals(rootRa)).toBe(false);
    const d = await device('fleet.scep.test');
    const without = await scep('POST', '/scep-mtls/fleet?operation=PKIOperation', message(d, ra).der);
    expect(without.status).toBe(403);
    const untrusted = await scep('POST', '/scep-mtls/fleet?operation=PKIOperation', message(d, ra).der, [
      d.self,
    ]);
    expect(untrusted.status).toBe(403);
    const trusted = await scep(
      'POST',
      '/scep-mtls/fleet?operation=PKIOperation',
      message(d, ra).der,
      clientChain,
    );
    expect(trusted.status, trusted.body.toString()).toBe(200);
    expect(reply(trusted.body, ra, d).status).toBe('SUCCESS');
  });

  it('a device-management profile routes the challenge to the plugged-in verifier (the SCEP server plugs in its own by default, HTTP 503 without one)', async () => {
    const created = await app.call('POST', '/api/v1/profiles', {
      name: 'SCEP MDM seam',
      enrollment: {
        issuer_id: 'iss-local',
        owner_id: 'own-default',
        team_id: 'team-default',
        renewal_policy_id: 'rp-default',
      },
      scep: { enabled: true, path_id: 'mdm-seam', mdm: { enabled: true, audience: 'certwright' } },
    });
    expect(created.status).toBe(201);
    const ra = await raCertificate('/scep/mdm-seam');
    const d = await device('mdm.scep.test', 'signed-challenge-token');
    // createScepServer plugs in its device-management service: a token that is not a signed challenge is refused.
    const refused = reply(
      (await scep('POST', '/scep/mdm-seam?operation=PKIOperation', message(d, ra).der)).body,
      ra,
      d,
    );
    expect(refused).toMatchObject({ status: 'FAILURE', failInfo: 'badRequest' });
    app.servers.scep.scep.setMdmVerifier(undefined);
    expect((await scep('POST', '/scep/mdm-seam?operation=PKIOperation', message(d, ra).der)).status).toBe(
      503,
    );
    const seen: string[] = [];
    app.servers.scep.scep.setMdmVerifier(async (request) => {
      seen.push(request.csr.challengePassword ?? '');
      if (request.csr.challengePassword !== 'signed-challenge-token') {
        throw new Error('unreachable in this test');
      }
      return { method: 'mdm', details: { mdm_subject: 'device-42' } };
    });
    try {
      const rep = reply(
        (await scep('POST', '/scep/mdm-seam?operation=PKIOperation', message(d, ra).der)).body,
        ra,
        d,
      );
      expect(rep.status).toBe('SUCCESS');
    } finally {
      app.servers.scep.scep.setMdmVerifier(app.servers.scep.mdm.scepVerifier());
    }
    expect(seen).toEqual(['signed-challenge-token']);
    const audit = await app.storage.audit.list({ action: 'scep_pkcsreq_mdm', page: 1, perPage: 10 });
    expect(audit.items[0]?.details).toMatchObject({
      outcome: 'success',
      challenge: 'mdm',
      mdm_subject: 'device-42',
    });
  });

  it('GET /api/v1/admin/scep/profiles: one snapshot per SCEP profile, the challenge never shown; POST is 405', async () => {
    const res = await app.call('GET', '/api/v1/admin/scep/profiles');
    expect(res.status).toBe(200);
    expect(res.body.profile_count).toBe(res.body.profiles.length);
    const root = res.body.profiles.find((p: { profile_id: string }) => p.profile_id === 'prof-default');
    expect(root).toMatchObject({
      path_id: null,
      mtls_enabled: false,
      mtls_trust_bundle_path: null,
      challenge_password_set: true,
    });
    expect(root.ra_subject).toContain('SCEP RA prof-default');
    expect(new Date(root.ra_not_after).getTime()).toBeGreaterThan(new Date(root.ra_not_before).getTime());
    const fleet = res.body.profiles.find((p: { path_id: string | null }) => p.path_id === 'fleet');
    expect(fleet).toMatchObject({ mtls_enabled: true });
    expect(JSON.stringify(res.body)).not.toContain(CHALLENGE);
    expect((await app.call('POST', '/api/v1/admin/scep/profiles', {})).status).toBe(405);
    expect((await app.call('GET', '/api/v1/admin/scep/profiles', undefined, { token: null })).status).toBe(
      401,
    );
  });
});

describe('SCEP RA rotation', () => {
  it('re-issues the RA with a third of its life left; requests to the replaced RA still decrypt', async () => {
    const old = await raCertificate();
    const oldInfo = readCertificate(old);
    const life = oldInfo.notAfter.getTime() - oldInfo.notBefore.getTime();
    const d = await device('rotation.scep.test');
    // Made before the rotation, sent after it.
    const early = message(d, old);
    (app.clock as ManualClock).advance(Math.ceil((life * 2) / 3) + 86_400_000);
    const fresh = await raCertificate();
    expect(fresh.equals(old)).toBe(false);
    const freshInfo = readCertificate(fresh);
    expect(freshInfo.notAfter.getTime()).toBeGreaterThan(oldInfo.notAfter.getTime());
    const d2 = await device('rotation-new.scep.test');
    const viaNew = readCertRep(
      (await scep('POST', '/scep?operation=PKIOperation', message(d2, fresh).der)).body,
      {
        ra: fresh,
        requester: { certificate: d2.self, privateKey: d2.key.privateKey },
      },
    );
    expect(viaNew.status).toBe('SUCCESS');
    const res = await scep('POST', '/scep?operation=PKIOperation', early.der);
    const viaOld = readCertRep(res.body, {
      ra: fresh,
      requester: { certificate: d.self, privateKey: d.key.privateKey },
    });
    expect(viaOld.status).toBe('SUCCESS');
    const snapshot = (await app.call('GET', '/api/v1/admin/scep/profiles')).body.profiles.find(
      (p: { profile_id: string }) => p.profile_id === 'prof-default',
    );
    expect(snapshot.ra_not_after).toBe(freshInfo.notAfter.toISOString());
  });
});
