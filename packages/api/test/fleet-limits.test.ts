import { randomBytes } from 'node:crypto';
import { ManualClock, SYSTEM_ACTOR, type TransportContext } from '@certwright/core';
import {
  buildScepRequest,
  createCertificationRequest,
  createSelfSignedCertificate,
  generateKeyPair,
  type KeyPair,
  parseCertsOnly,
  readCertRep,
} from '@certwright/core/pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RATE_LIMITS } from '../src/index.js';
import { AcmeTestClient, newAccountKey, ORIGIN } from './support/acme-client.js';
import { conformance } from './support/openapi-conformance.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Default limits that fit real fleets: per address, each endpoint of a class counts alone at
 * 20 requests a second (one host running several ACME clients in a row is not throttled, and
 * its ACME traffic leaves its SCEP budget whole); per ACME account and per SCEP credential, a
 * budget of its own, which still holds when the per-address limit is raised for clients behind
 * one NAT address.
 */

const CHALLENGE = 'fleet scep challenge';
const clock = new ManualClock('2026-03-01T00:00:00Z');

describe('the default per-address limits', () => {
  let app: TestApp;
  beforeAll(async () => {
    // The server's defaults: no rateLimits given.
    app = await createTestApp({ clock });
    await app.services.profiles.update(SYSTEM_ACTOR, 'prof-default', {
      scep: { enabled: true, challenge_password: CHALLENGE },
    });
  }, 180_000);
  afterAll(() => app?.close());

  it('are 20 requests a second per endpoint, averaged over 10 s', () => {
    expect(DEFAULT_RATE_LIMITS).toMatchObject({ windowMs: 10_000, public: 200, pki: 200, enrollment: 200 });
  });

  it('let one host run three ACME clients in a row, each registering and ordering, without a 429', async () => {
    const acme = new AcmeTestClient(app.handler);
    const statuses: number[] = [];
    for (let client = 0; client < 3; client++) {
      // What certbot, lego and an ARI check send: directory, nonces, account, orders, polls.
      statuses.push((await acme.send('GET', `${ORIGIN}/acme/directory`)).status);
      const key = newAccountKey();
      const account = await acme.post(`${ORIGIN}/acme/new-account`, { termsOfServiceAgreed: true }, { key });
      statuses.push(account.status);
      const kid = account.headers.get('location')!;
      for (let order = 0; order < 4; order++) {
        const created = await acme.post(
          `${ORIGIN}/acme/new-order`,
          { identifiers: [{ type: 'dns', value: `host${client}-${order}.example.test` }] },
          { key, kid },
        );
        statuses.push(created.status);
        for (let poll = 0; poll < 3; poll++) {
          statuses.push((await acme.post(created.headers.get('location')!, '', { key, kid })).status);
        }
      }
    }
    // Every request above and its new-nonce: well over the former 50 per 10 s.
    expect(statuses.length * 2).toBeGreaterThan(100);
    expect(statuses.filter((s) => s === 429)).toEqual([]);
  });

  it('count each endpoint alone: an address whose ACME budget is spent still enrolls over SCEP', async () => {
    const from: TransportContext = { remoteAddress: '198.51.100.77' };
    const get = (path: string) =>
      conformance.call(app.handler, new Request(`https://localhost:8443${path}`), from);
    let acme = 0;
    while ((await get('/acme/directory')).status !== 429) acme++;
    expect(acme).toBe(DEFAULT_RATE_LIMITS.enrollment);
    expect((await get('/scep?operation=GetCACaps')).status).toBe(200);
    expect((await get('/.well-known/est/cacerts')).status).not.toBe(429);
  });
});

describe('per-account and per-credential limits', () => {
  let app: TestApp;
  const ACCOUNT_LIMIT = 4;
  const CREDENTIAL_LIMIT = 2;
  beforeAll(async () => {
    app = await createTestApp({
      clock,
      // The per-address limit off, as for a fleet behind one NAT address.
      handler: {
        rateLimits: { enrollment: 0 },
        acme: { settings: { accountRequests: { limit: ACCOUNT_LIMIT, windowMs: 60_000 } } },
        scep: { rateLimit: { limit: CREDENTIAL_LIMIT, windowMs: 60_000 } },
      },
    });
    await app.services.profiles.update(SYSTEM_ACTOR, 'prof-default', {
      scep: { enabled: true, challenge_password: CHALLENGE },
    });
  }, 180_000);
  afterAll(() => app?.close());

  it('ACME: an account past its budget gets rateLimited with Retry-After; another account is served', async () => {
    const acme = new AcmeTestClient(app.handler);
    const signUp = async () => {
      const key = newAccountKey();
      const account = await acme.post(`${ORIGIN}/acme/new-account`, { termsOfServiceAgreed: true }, { key });
      expect(account.status).toBe(201);
      return { key, kid: account.headers.get('location')! };
    };
    const busy = await signUp();
    const answers = [];
    for (let i = 0; i <= ACCOUNT_LIMIT; i++) answers.push(await acme.post(busy.kid, '', busy));
    expect(answers.slice(0, ACCOUNT_LIMIT).map((a) => a.status)).toEqual(Array(ACCOUNT_LIMIT).fill(200));
    const refused = answers.at(-1)!;
    expect(refused.status).toBe(429);
    expect(refused.body.type).toBe('urn:ietf:params:acme:error:rateLimited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('replay-nonce')).toBeTruthy();
    const quiet = await signUp();
    expect((await acme.post(quiet.kid, '', quiet)).status).toBe(200);
  });

  it('SCEP: a credential past its budget gets 503 with Retry-After and nothing issued; another device enrolls', async () => {
    const transport: TransportContext = { remoteAddress: '203.0.113.40' };
    const scep = async (method: string, path: string, body?: Uint8Array) => {
      const res = await conformance.call(
        app.handler,
        new Request(`https://localhost:8443${path}`, {
          method,
          ...(body
            ? { body: new Uint8Array(body), headers: { 'content-type': 'application/x-pki-message' } }
            : {}),
        }),
        transport,
      );
      return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
    };
    const certs = parseCertsOnly((await scep('GET', '/scep?operation=GetCACert')).body);
    const ra = certs[certs.length - 1]!;
    const deviceKey = async (cn: string) => {
      const key = await generateKeyPair('RSA-2048');
      const now = clock.now().getTime();
      const self = createSelfSignedCertificate(
        {
          subject: [{ type: 'CN', value: cn }],
          notBefore: new Date(now - 60_000),
          notAfter: new Date(now + 86_400_000),
        },
        key.privateKey,
      ).der;
      return { key, self, cn };
    };
    const enroll = async (d: { key: KeyPair; self: Uint8Array; cn: string }) => {
      const der = buildScepRequest({
        messageType: 'PKCSReq',
        transactionId: randomBytes(8).toString('hex'),
        senderNonce: randomBytes(16),
        content: createCertificationRequest({
          subject: [{ type: 'CN', value: d.cn }],
          privateKey: d.key.privateKey,
          challengePassword: CHALLENGE,
        }),
        signer: { certificate: d.self, privateKey: d.key.privateKey },
        recipient: ra,
      });
      return scep('POST', '/scep?operation=PKIOperation', der);
    };
    const before = (await app.services.certificates.list({ source: 'SCEP', per_page: 1 })).total;
    const device = await deviceKey('busy.fleet.example.test');
    for (let i = 0; i < CREDENTIAL_LIMIT; i++) {
      const ok = await enroll(device);
      expect(ok.status).toBe(200);
      expect(
        readCertRep(ok.body, {
          ra,
          requester: { certificate: device.self, privateKey: device.key.privateKey },
        }).status,
      ).toBe('SUCCESS');
    }
    const refused = await enroll(device);
    expect(refused.status).toBe(503);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect((await app.services.certificates.list({ source: 'SCEP', per_page: 1 })).total).toBe(
      before + CREDENTIAL_LIMIT,
    );
    const other = await deviceKey('quiet.fleet.example.test');
    expect((await enroll(other)).status).toBe(200);
  });
});
