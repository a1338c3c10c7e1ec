import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AcmeAccount, ManualClock } from '@certwright/core';
import { staticResolver } from '@certwright/core/net';
import {
  createCertificationRequest,
  formatAcmeCertId,
  generateKeyPair,
  jwkThumbprint,
  type KeyPair,
  readCertificate,
} from '@certwright/core/pki';
import { type ChallengeValidator, createChallengeValidator } from '@certwright/protocols/acme';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AccountKey, AcmeTestClient, newAccountKey, ORIGIN } from './support/acme-client.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * The order side of the ACME server through createHandler with a JWS client (jose
 * FlattenedSign): new-order → authz → challenge → validation (the real http-01 validator
 * against a loopback server) → finalize → certificate → revoke, and the refusals a client
 * relies on.
 */

const BASE = `${ORIGIN}/acme`;
const clock = new ManualClock('2026-03-01T00:00:00Z');
const jobs: { topic: string; id: string }[] = [];
let app: TestApp;
let client: AcmeTestClient;
let validator: ChallengeValidator;
/** Key authorizations the loopback http-01 server answers, by token. */
const published = new Map<string, string>();
let challengeServer: Server;

beforeAll(async () => {
  challengeServer = createServer((req, res) => {
    const token = req.url?.startsWith('/.well-known/acme-challenge/') ? req.url.slice(28) : '';
    const body = published.get(token);
    res.writeHead(body ? 200 : 404, { 'content-type': 'text/plain' }).end(body ?? 'not found');
  });
  await new Promise<void>((resolve) => challengeServer.listen(0, '127.0.0.1', resolve));
  validator = createChallengeValidator({
    httpPort: (challengeServer.address() as AddressInfo).port,
    allowedRanges: ['127.0.0.1'],
    resolver: staticResolver({ 'www.acme.test': '127.0.0.1', 'acme.test': '127.0.0.1' }),
  });
  app = await createTestApp({
    clock,
    // The manual clock never moves the per-client window on; the limit is not the point here.
    handler: {
      rateLimits: { enrollment: 0 },
      acme: {
        queue: {
          async enqueue<P>(topic: string, payload: P) {
            jobs.push({ topic, id: (payload as { id: string }).id });
            return `job-${jobs.length}`;
          },
        },
      },
    },
  });
  client = new AcmeTestClient(app.handler);
}, 180_000);
afterAll(async () => {
  await app?.close();
  await new Promise<void>((resolve) => challengeServer?.close(() => resolve()));
});

interface TestAccount {
  key: AccountKey;
  kid: string;
  record: AcmeAccount;
}

/** A new account of the default profile for `key`, registered through new-account. */
async function account(key: AccountKey = newAccountKey()): Promise<TestAccount> {
  const created = await client.post(`${BASE}/new-account`, { termsOfServiceAgreed: true }, { key });
  expect(created.status).toBe(201);
  const kid = created.headers.get('location')!;
  const record = await app.storage.acmeAccounts.get(kid.slice(kid.lastIndexOf('/') + 1));
  expect(record?.jwk_thumbprint).toBe(jwkThumbprint(key.jwk as Record<string, string>));
  return { key, kid, record: record! };
}

const post = (who: TestAccount, url: string, payload: unknown) =>
  client.post(url, payload, { key: who.key, kid: who.kid });

async function csr(names: { dns?: string[]; ip?: string[] }, pair?: KeyPair): Promise<string> {
  const key = pair ?? (await generateKeyPair('ECDSA-P256'));
  return createCertificationRequest({
    subject: [],
    privateKey: key.privateKey,
    subjectAltNames: [
      ...(names.dns ?? []).map((value) => ({ type: 'dns' as const, value })),
      ...(names.ip ?? []).map((value) => ({ type: 'ip' as const, value })),
    ],
  }).toString('base64url');
}

/** Runs the validation jobs the challenge responses enqueued, as the server's workers would. */
async function runValidations(): Promise<void> {
  for (const job of jobs.splice(0)) await app.servers.acme.challenges.validate(job.id, validator);
}

/** A new order for `names`, each authorization proven through http-01 on the loopback server. */
async function readyOrder(who: TestAccount, names: string[]) {
  const created = await post(who, `${BASE}/new-order`, {
    identifiers: names.map((value) => ({ type: 'dns', value })),
  });
  expect(created.status).toBe(201);
  const orderUrl = created.headers.get('location')!;
  for (const authzUrl of created.body.authorizations as string[]) {
    const authz = await post(who, authzUrl, '');
    const http = authz.body.challenges.find((c: { type: string }) => c.type === 'http-01');
    published.set(http.token, `${http.token}.${who.record.jwk_thumbprint}`);
    await post(who, http.url, {});
  }
  await runValidations();
  return { orderUrl, order: (await post(who, orderUrl, '')).body };
}

describe('ACME orders over the wire', () => {
  it('runs new-account → new-order → challenge → validation → finalize → download → revoke end to end', async () => {
    const who = await account();
    const created = await post(who, `${BASE}/new-order`, {
      identifiers: [
        { type: 'dns', value: 'www.acme.test' },
        { type: 'dns', value: 'acme.test' },
      ],
    });
    expect(created.status).toBe(201);
    const orderUrl = created.headers.get('location')!;
    expect(orderUrl).toMatch(new RegExp(`^${BASE}/order/ord-`));
    expect(created.headers.get('retry-after')).toBe('1');
    expect(created.body).toMatchObject({
      status: 'pending',
      identifiers: [
        { type: 'dns', value: 'www.acme.test' },
        { type: 'dns', value: 'acme.test' },
      ],
      finalize: `${orderUrl}/finalize`,
    });
    expect(created.body.authorizations).toHaveLength(2);

    for (const authzUrl of created.body.authorizations as string[]) {
      const authz = await post(who, authzUrl, '');
      expect(authz.status).toBe(200);
      expect(authz.body.status).toBe('pending');
      const http = authz.body.challenges.find((c: { type: string }) => c.type === 'http-01');
      expect(http).toMatchObject({ status: 'pending', url: expect.stringContaining(`${BASE}/challenge/`) });
      published.set(http.token, `${http.token}.${who.record.jwk_thumbprint}`);
      const answered = await post(who, http.url, {});
      expect(answered.status).toBe(200);
      expect(answered.body.status).toBe('processing');
      expect(answered.headers.get('retry-after')).toBe('1');
      expect(answered.headers.get('link')).toContain(`<${authzUrl}>;rel="up"`);
    }
    expect(jobs.map((j) => j.topic)).toEqual(['acme.validate.http-01', 'acme.validate.http-01']);
    await runValidations();

    const ready = await post(who, orderUrl, '');
    expect(ready.body.status).toBe('ready');
    expect(ready.headers.get('retry-after')).toBeNull();
    const pair = await generateKeyPair('ECDSA-P256');
    const finalized = await post(who, ready.body.finalize, {
      csr: await csr({ dns: ['acme.test', 'www.acme.test'] }, pair),
    });
    expect(finalized.status).toBe(200);
    expect(finalized.body.status).toBe('valid');
    expect(finalized.body.certificate).toMatch(new RegExp(`^${BASE}/cert/`));

    const download = await post(who, finalized.body.certificate, '');
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/pem-certificate-chain');
    expect(download.headers.get('link')).toContain(`<${finalized.body.certificate}/issuer>;rel="up"`);
    const leaf = new X509Certificate(download.body);
    expect(leaf.subjectAltName).toBe('DNS:acme.test, DNS:www.acme.test');
    expect(leaf.publicKey.equals(pair.publicKey)).toBe(true);
    const issuerChain = await post(who, `${finalized.body.certificate}/issuer`, '');
    expect(leaf.checkIssued(new X509Certificate(issuerChain.body))).toBe(true);

    // Renewal information for it, then revocation by the account.
    const aki = readCertificate(new X509Certificate(issuerChain.body).raw).keyIdentifier;
    const certId = formatAcmeCertId(aki, leaf.serialNumber.toLowerCase().replace(/^0+/, ''));
    const ari = await client.send('GET', `${BASE}/renewal-info/${certId}`);
    expect(ari.status).toBe(200);
    expect(ari.headers.get('retry-after')).toBe(String(6 * 3600));
    expect(new Date(ari.body.suggestedWindow.end).getTime()).toBeLessThanOrEqual(
      new Date(leaf.validTo).getTime(),
    );

    const revoked = await post(who, `${BASE}/revoke-cert`, {
      certificate: leaf.raw.toString('base64url'),
      reason: 4,
    });
    expect(revoked.status).toBe(200);
    const again = await post(who, `${BASE}/revoke-cert`, { certificate: leaf.raw.toString('base64url') });
    expect(again.body.type).toBe('urn:ietf:params:acme:error:alreadyRevoked');
    const crlVersion = await app.storage.versions.findBySerial(
      (await app.storage.certificates.list({ perPage: 500 })).items.find((c) =>
        c.sans.includes('www.acme.test'),
      )!.issuer_id,
      readCertificate(leaf.raw).serialNumber,
    );
    expect(crlVersion?.revocation_reason).toBe('superseded');
  });

  it('answers badCSR for a CSR with an extra or a missing name and badPublicKey for a small key', async () => {
    const who = await account();
    const { order } = await readyOrder(who, ['acme.test']);
    const extra = await post(who, order.finalize, { csr: await csr({ dns: ['acme.test', 'evil.example'] }) });
    expect(extra.status).toBe(400);
    expect(extra.body.type).toBe('urn:ietf:params:acme:error:badCSR');
    const missing = await post(who, order.finalize, { csr: await csr({ dns: ['www.acme.test'] }) });
    expect(missing.body.type).toBe('urn:ietf:params:acme:error:badCSR');
    const weak = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const small = createCertificationRequest({
      subject: [],
      privateKey: weak.privateKey,
      subjectAltNames: [{ type: 'dns', value: 'acme.test' }],
    });
    const refused = await post(who, order.finalize, { csr: small.toString('base64url') });
    expect(refused.body.type).toBe('urn:ietf:params:acme:error:badPublicKey');
    // The order is still ready: a corrected CSR is issued.
    const good = await post(who, order.finalize, { csr: await csr({ dns: ['acme.test'] }) });
    expect(good.body.status).toBe('valid');
  });

  it('answers orderNotReady for a pending order and 404 for another account’s order', async () => {
    const who = await account();
    const stranger = await account();
    const created = await post(who, `${BASE}/new-order`, {
      identifiers: [{ type: 'dns', value: 'acme.test' }],
    });
    const early = await post(who, created.body.finalize, { csr: await csr({ dns: ['acme.test'] }) });
    expect(early.status).toBe(403);
    expect(early.body.type).toBe('urn:ietf:params:acme:error:orderNotReady');
    const theirs = await post(stranger, created.headers.get('location')!, '');
    expect(theirs.status).toBe(404);
    expect(theirs.body.type).toBe('urn:ietf:params:acme:error:malformed');
    const theirAuthz = await post(stranger, created.body.authorizations[0], '');
    expect(theirAuthz.status).toBe(404);
    const notGet = await post(who, created.headers.get('location')!, {});
    expect(notGet.body.type).toBe('urn:ietf:params:acme:error:malformed');
  });

  it('stores a failed http-01 validation as an incorrectResponse problem on the challenge', async () => {
    const who = await account();
    const created = await post(who, `${BASE}/new-order`, {
      identifiers: [{ type: 'dns', value: 'www.acme.test' }],
    });
    const authz = await post(who, created.body.authorizations[0], '');
    const http = authz.body.challenges.find((c: { type: string }) => c.type === 'http-01');
    published.set(http.token, 'not-the-key-authorization');
    await post(who, http.url, {});
    await runValidations();
    const after = await post(who, http.url, '');
    expect(after.body.status).toBe('invalid');
    // A problem document (RFC 7807): type, detail and status.
    expect(after.body.error).toEqual({
      type: 'urn:ietf:params:acme:error:incorrectResponse',
      detail: expect.any(String),
      status: 400,
    });
    expect((await post(who, created.headers.get('location')!, '')).body.status).toBe('invalid');
  });

  it('revokes when signed with the certificate key (jwk) and refuses an unassigned reason', async () => {
    const who = await account();
    const { order } = await readyOrder(who, ['acme.test']);
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const done = await post(who, order.finalize, {
      csr: await csr({ dns: ['acme.test'] }, pair as unknown as KeyPair),
    });
    const pem = (await post(who, done.body.certificate, '')).body as string;
    const leaf = new X509Certificate(pem);
    const certKey: AccountKey = {
      alg: 'ES256',
      privateKey: pair.privateKey,
      jwk: pair.publicKey.export({ format: 'jwk' }) as Record<string, unknown>,
    };
    const certificate = leaf.raw.toString('base64url');
    const badReason = await client.post(`${BASE}/revoke-cert`, { certificate, reason: 7 }, { key: certKey });
    expect(badReason.body.type).toBe('urn:ietf:params:acme:error:badRevocationReason');
    const otherKey = await client.post(`${BASE}/revoke-cert`, { certificate }, { key: newAccountKey() });
    expect(otherKey.status).toBe(403);
    const ok = await client.post(`${BASE}/revoke-cert`, { certificate, reason: 1 }, { key: certKey });
    expect(ok.status).toBe(200);
  });

  it('answers renewal information for the RFC 9773 certID format and refuses malformed ones', async () => {
    const unknown = await client.send('GET', `${BASE}/renewal-info/aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE`);
    expect(unknown.status).toBe(404);
    const bad = await client.send('GET', `${BASE}/renewal-info/not-a-cert-id`);
    expect(bad.status).toBe(400);
    expect(bad.body.type).toBe('urn:ietf:params:acme:error:malformed');
    const unpadded = await client.send('GET', `${BASE}/renewal-info/aYhba4dGQEHhs3uEe6CuLN4ByNQ.gA`);
    expect(unpadded.status).toBe(400);
  });

  it('limits new orders per account with rateLimited and Retry-After', async () => {
    await app.call('PUT', '/api/v1/profiles/prof-default', {
      acme: { rate_limits: { orders_per_account_per_hour: 1 } },
    });
    try {
      const who = await account();
      const order = { identifiers: [{ type: 'dns', value: 'acme.test' }] };
      expect((await post(who, `${BASE}/new-order`, order)).status).toBe(201);
      const limited = await post(who, `${BASE}/new-order`, order);
      expect(limited.status).toBe(429);
      expect(limited.body.type).toBe('urn:ietf:params:acme:error:rateLimited');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await app.call('PUT', '/api/v1/profiles/prof-default', {
        acme: { rate_limits: { orders_per_account_per_hour: 300 } },
      });
    }
  });
});

describe('ACME renewal information switched off', () => {
  let off: TestApp;
  beforeAll(async () => {
    off = await createTestApp({ handler: { acme: { settings: { renewalInfo: false } } } });
  }, 180_000);
  afterAll(() => off?.close());

  it('has no renewal-info route and no directory entry', async () => {
    const offClient = new AcmeTestClient(off.handler);
    expect((await offClient.directory()).renewalInfo).toBeUndefined();
    const answer = await offClient.send('GET', `${BASE}/renewal-info/aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE`);
    expect(answer.status).toBe(404);
  });
});
