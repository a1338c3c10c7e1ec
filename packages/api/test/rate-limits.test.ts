import { randomBytes } from 'node:crypto';
import {
  CertwrightError,
  type EphemeralStore,
  ManualClock,
  MemoryEphemeralStore,
  silentLogger,
  type TransportContext,
} from '@certwright/core';
import { buildCertId, der, derReader, OID, readCertificate } from '@certwright/core/pki';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHandler, DEFAULT_RATE_LIMITS } from '../src/index.js';
import { conformance } from './support/openapi-conformance.js';
import { createTestApp, TEST_API_KEY, type TestApp } from './support/test-app.js';

const attacker: TransportContext = { remoteAddress: '203.0.113.7' };
const neighbour: TransportContext = { remoteAddress: '198.51.100.20' };
const WINDOW_MS = DEFAULT_RATE_LIMITS.windowMs;
const TRY_LATER = Buffer.from('30030a0103', 'hex');

/** The OCSPResponseStatus of a DER OCSPResponse (RFC 6960 §4.2.1): 0 successful, 3 tryLater. */
function responseStatus(body: Uint8Array): number {
  const root = derReader.readRoot(body);
  const [status] = derReader.children(body, root);
  return derReader.content(body, status!)[0]!;
}

describe('per-client limits on the unauthenticated revocation-status routes', () => {
  const PKI_LIMIT = 6;
  let app: TestApp;
  let clock: ManualClock;
  let issuerId: string;
  let issuerPem: string;

  beforeAll(async () => {
    clock = new ManualClock('2026-01-01T00:00:00Z');
    app = await createTestApp({ clock, handler: { rateLimits: { pki: PKI_LIMIT } } });
    const created = await app.call('POST', '/api/v1/issuers', { name: 'Flood CA', type: 'Local' });
    expect(created.status).toBe(201);
    issuerId = created.body.id;
    const chain = await app.call('GET', `/api/v1/issuers/${issuerId}/chain`);
    expect(chain.status).toBe(200);
    issuerPem = (chain.body as string).split(/(?<=-----END CERTIFICATE-----\n?)/)[0]!;
  }, 180_000);
  afterAll(() => app.close());

  /** A request for `count` serials; with `nonceBytes`, a nonce that defeats the response cache. */
  const ocspRequest = (count: number, nonceBytes = 0) => {
    const issuer = readCertificate(issuerPem);
    const requests = Array.from({ length: count }, (_, i) =>
      der.sequence(buildCertId(issuer, (0x1000 + i).toString(16), 'sha256').der),
    );
    const extensions =
      nonceBytes > 0
        ? [
            der.explicit(
              2,
              der.sequence(
                der.extension(OID.idPkixOcspNonce, false, der.octetString(randomBytes(nonceBytes))),
              ),
            ),
          ]
        : [];
    return new Uint8Array(der.sequence(der.sequence(der.sequence(...requests), ...extensions)));
  };
  const post = (body: Uint8Array<ArrayBuffer>, from: TransportContext) =>
    conformance.call(
      app.handler,
      new Request(`https://localhost:8443/.well-known/pki/ocsp/${issuerId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/ocsp-request' },
        body,
      }),
      from,
    );

  it("throttles one client's OCSP flood while another client's requests keep being answered", async () => {
    const flood = ocspRequest(64, 8192);
    const normal = ocspRequest(1);
    const answered: number[] = [];
    const throttled: Response[] = [];
    for (let i = 0; i < PKI_LIMIT * 4; i++) {
      const res = await post(flood, attacker);
      const body = new Uint8Array(await res.arrayBuffer());
      // Answered ones reach the responder (which may refuse 64 CertIDs or a long nonce as
      // malformedRequest); throttled ones are the HTTP 429 with a tryLater body.
      if (res.status === 429 && Buffer.from(body).equals(TRY_LATER)) throttled.push(res);
      else answered.push(i);
      // The neighbour asks at a normal rate, well inside its own budget.
      if (i % PKI_LIMIT === 0) {
        const mine = await post(normal, neighbour);
        expect(mine.status).toBe(200);
        expect(responseStatus(new Uint8Array(await mine.arrayBuffer()))).toBe(0);
      }
    }
    // The first PKI_LIMIT reach the responder; every later one is refused before it runs.
    expect(answered).toEqual(Array.from({ length: PKI_LIMIT }, (_, i) => i));
    expect(throttled).toHaveLength(PKI_LIMIT * 3);
    for (const res of throttled) {
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(WINDOW_MS / 1000);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('content-type')).toBe('application/ocsp-response');
    }
  });

  it('counts CRL apart from OCSP (each endpoint its own budget): 429 with Retry-After past it; the window frees both', async () => {
    const crl = (from: TransportContext) =>
      conformance.call(
        app.handler,
        new Request(`https://localhost:8443/.well-known/pki/crl/${issuerId}`),
        from,
      );
    // The OCSP flood above left this client's OCSP budget spent, not its CRL budget.
    expect((await post(ocspRequest(1), attacker)).status).toBe(429);
    for (let i = 0; i < PKI_LIMIT; i++) expect((await crl(attacker)).status).toBe(200);
    const refused = await crl(attacker);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await crl(neighbour)).status).toBe(200);

    clock.advance(WINDOW_MS);
    expect((await crl(attacker)).status).toBe(200);
    const again = await post(ocspRequest(1), attacker);
    expect(responseStatus(new Uint8Array(await again.arrayBuffer()))).toBe(0);
  });

  it('counts an IPv6 client per /64, so rotating addresses inside it does not help', async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= PKI_LIMIT + 1; i++) {
      const res = await post(ocspRequest(1), { remoteAddress: `2001:db8:aa:bb::${i.toString(16)}` });
      statuses.push(responseStatus(new Uint8Array(await res.arrayBuffer())));
    }
    expect(statuses).toEqual([...Array(PKI_LIMIT).fill(0), 3]);
    const elsewhere = await post(ocspRequest(1), { remoteAddress: '2001:db8:aa:cc::1' });
    expect(responseStatus(new Uint8Array(await elsewhere.arrayBuffer()))).toBe(0);
  });
});

describe('failed API keys are throttled per client address', () => {
  const LIMIT = 3;
  let clock: ManualClock;
  const make = (ephemeral?: EphemeralStore) =>
    createHandler({
      auth: { type: 'api-key', secret: TEST_API_KEY },
      rateLimits: { authFailures: LIMIT },
      ephemeral: ephemeral ?? new MemoryEphemeralStore({ clock }),
    });
  const get = (handler: ReturnType<typeof make>, key: string, from: TransportContext) =>
    handler(
      new Request('https://localhost:8443/api/v1/openapi.json', {
        headers: { authorization: `Bearer ${key}` },
      }),
      from,
    );

  beforeAll(() => {
    clock = new ManualClock('2026-01-01T00:00:00Z');
  });

  it('refuses even the right key with 429 after N failures; other clients are unaffected', async () => {
    const handler = make();
    for (let i = 0; i < LIMIT; i++) expect((await get(handler, `guess-${i}`, attacker)).status).toBe(401);
    const locked = await get(handler, TEST_API_KEY, attacker);
    expect(locked.status).toBe(429);
    expect(locked.headers.get('content-type')).toBe('application/problem+json');
    expect(await locked.json()).toMatchObject({ status: 429, error: 'rate_limited' });
    expect(Number(locked.headers.get('retry-after'))).toBe(DEFAULT_RATE_LIMITS.authFailureWindowMs / 1000);
    expect((await get(handler, TEST_API_KEY, neighbour)).status).toBe(200);
    expect((await get(handler, 'wrong', neighbour)).status).toBe(401);
  });

  it("does not reset a client's failures when it or anyone else succeeds", async () => {
    const handler = make();
    for (let i = 0; i < LIMIT - 1; i++) expect((await get(handler, 'wrong', attacker)).status).toBe(401);
    expect((await get(handler, TEST_API_KEY, attacker)).status).toBe(200);
    expect((await get(handler, TEST_API_KEY, neighbour)).status).toBe(200);
    expect((await get(handler, 'wrong', attacker)).status).toBe(401);
    expect((await get(handler, TEST_API_KEY, attacker)).status).toBe(429);
  });

  it('lets the client try again after the window, and shares the count between instances', async () => {
    const shared = new MemoryEphemeralStore({ clock });
    const one = make(shared);
    const two = make(shared);
    for (let i = 0; i < LIMIT; i++) {
      expect((await get(i % 2 === 0 ? one : two, 'wrong', attacker)).status).toBe(401);
    }
    expect((await get(one, TEST_API_KEY, attacker)).status).toBe(429);
    expect((await get(two, TEST_API_KEY, attacker)).status).toBe(429);
    clock.advance(DEFAULT_RATE_LIMITS.authFailureWindowMs);
    expect((await get(two, TEST_API_KEY, attacker)).status).toBe(200);
  });

  it('does not count a request that carries no credentials', async () => {
    const handler = make();
    for (let i = 0; i < LIMIT + 2; i++) {
      const res = await handler(new Request('https://localhost:8443/api/v1/openapi.json'), attacker);
      expect(res.status).toBe(401);
    }
    expect((await get(handler, TEST_API_KEY, attacker)).status).toBe(200);
  });
});

describe('public REST routes', () => {
  it('answer 429 problem JSON with Retry-After past the public limit, per client', async () => {
    const handler = createHandler({
      auth: { type: 'api-key', secret: TEST_API_KEY },
      rateLimits: { public: 2 },
    });
    const health = (from: TransportContext) => handler(new Request('https://localhost:8443/health'), from);
    expect((await health(attacker)).status).toBe(200);
    expect((await health(attacker)).status).toBe(200);
    const refused = await health(attacker);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await health(neighbour)).status).toBe(200);
  });

  it('stay up when the shared store fails: the limit is skipped and a warning logged once', async () => {
    const failing = new MemoryEphemeralStore();
    vi.spyOn(failing, 'slidingWindowHit').mockRejectedValue(
      new CertwrightError('unavailable', 'redis is down'),
    );
    const warn = vi.fn();
    const handler = createHandler({
      auth: { type: 'api-key', secret: TEST_API_KEY },
      rateLimits: { public: 1 },
      ephemeral: failing,
      logger: { ...silentLogger, warn },
    });
    for (let i = 0; i < 3; i++) {
      expect((await handler(new Request('https://localhost:8443/health'), attacker)).status).toBe(200);
    }
    expect(warn).toHaveBeenCalledTimes(1);
  });
});
