import { randomBytes } from 'node:crypto';
import { type CertwrightHandler, createHandler, type ResponseEvent } from '@certwright/api';
import {
  createServices,
  type Logger,
  SecretBox,
  type Services,
  SYSTEM_ACTOR,
  silentLogger,
  systemClock,
} from '@certwright/core';
import { buildCertId, der, readCertificate } from '@certwright/core/pki';
import type { createPgliteStorage } from '@certwright/storage-pg';
import { createMigratedPgliteStorage } from '@certwright/storage-pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CountingListener,
  comparable,
  listenCountingWebCalls,
  type Reply,
  sendRaw,
} from './support/direct-listener.js';

/**
 * A per-client limit holds whichever way a request comes in: through the server's listener
 * (its direct entry for OCSP, ACME and SCEP; node:http and the Web handler for the rest) or
 * through the Web handler an embedder mounts. Each limited route class — `public`, `pki`,
 * `enrollment` — is driven through both: past the limit the answer is 429 with Retry-After,
 * the same on both entries, counted in the same metrics event and the same log line, and a
 * second client is still served.
 */

const LIMIT = 3;
const WINDOW_SECONDS = 10;
let storage: Awaited<ReturnType<typeof createPgliteStorage>>;
let services: Services;
let handler: CertwrightHandler;
let listener: CountingListener;
let origin: string;
let issuerId: string;
let ocspBody: Uint8Array;
const events: ResponseEvent[] = [];
const logLines: Record<string, unknown>[] = [];
/** Every test run of a route and entry gets fresh client addresses: a full budget each. */
let client = 0;

/** Keeps the per-request lines the handler logs (at debug) for both entries. */
const recording: Logger = {
  debug: (fields, message) => {
    if (message === 'request') logLines.push(fields as Record<string, unknown>);
  },
  info: () => {},
  warn: () => {},
  error: () => {},
  child: () => recording,
};

interface Limited {
  class: 'public' | 'pki' | 'enrollment';
  name: string;
  method: string;
  path: () => string;
  /** The route template metrics and logs name. */
  route: string;
  body?: () => Uint8Array;
  headers?: Record<string, string>;
  /** The listener answers it through the direct entry, without the Web handler. */
  direct: boolean;
}

const ROUTES: Limited[] = [
  {
    class: 'public',
    name: 'version',
    method: 'GET',
    path: () => '/api/v1/version',
    route: '/api/v1/version',
    direct: false,
  },
  {
    class: 'pki',
    name: 'CRL',
    method: 'GET',
    path: () => `/.well-known/pki/crl/${issuerId}`,
    route: '/.well-known/pki/crl/{issuer_id}',
    direct: false,
  },
  {
    class: 'pki',
    name: 'OCSP',
    method: 'POST',
    path: () => `/.well-known/pki/ocsp/${issuerId}`,
    route: '/.well-known/pki/ocsp/{issuer_id}',
    body: () => ocspBody,
    headers: { 'content-type': 'application/ocsp-request' },
    direct: true,
  },
  {
    class: 'enrollment',
    name: 'ACME',
    method: 'GET',
    path: () => '/acme/directory',
    route: '/acme/{path}',
    direct: true,
  },
  {
    class: 'enrollment',
    name: 'EST',
    method: 'GET',
    path: () => '/.well-known/est/cacerts',
    route: '/.well-known/est/{operation}',
    direct: false,
  },
  {
    class: 'enrollment',
    name: 'SCEP',
    method: 'GET',
    path: () => '/scep?operation=GetCACaps',
    route: '/scep/{path_id}',
    direct: true,
  },
];

type Entry = 'listener' | 'web handler';

async function call(entry: Entry, route: Limited, from: string): Promise<Reply> {
  const body = route.body?.();
  const headers = { 'x-forwarded-for': from, ...route.headers };
  if (entry === 'listener') {
    return sendRaw(listener.port, route.method, route.path(), { ...(body ? { body } : {}), headers });
  }
  const response = await handler(
    new Request(`${origin}${route.path()}`, {
      method: route.method,
      headers,
      ...(body ? { body: new Uint8Array(body) } : {}),
    }),
    { remoteAddress: from },
  );
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: Buffer.from(await response.arrayBuffer()),
  };
}

/** A problem document without its request id (differs per answer); other bodies as bytes. */
function answerBody(reply: Reply): unknown {
  if (!String(reply.headers['content-type']).includes('json')) return reply.body.toString('hex');
  const { request_id: _id, ...rest } = JSON.parse(reply.body.toString());
  return rest;
}

beforeAll(async () => {
  storage = await createMigratedPgliteStorage({
    secretBox: new SecretBox(randomBytes(32)),
    clock: systemClock,
  });
  services = createServices({ storage, clock: systemClock, logger: silentLogger });
  const issuer = await services.issuers.create(SYSTEM_ACTOR, { name: 'limits CA', type: 'Local' });
  issuerId = issuer.id;
  const [issuingPem] = await services.pki.lifecycle.caChain(issuer.id);
  const certId = buildCertId(readCertificate(issuingPem!), '0badc0de', 'sha1').der;
  ocspBody = new Uint8Array(der.sequence(der.sequence(der.sequence(der.sequence(certId)))));
  await services.profiles.update(SYSTEM_ACTOR, 'prof-default', {
    acme: { enabled: true },
    est: { enabled: true },
    scep: { enabled: true, challenge_password: 'limits scep challenge' },
  });
  handler = createHandler({
    auth: { type: 'none' },
    services,
    logger: recording,
    rateLimits: { windowMs: WINDOW_SECONDS * 1000, public: LIMIT, pki: LIMIT, enrollment: LIMIT },
    clientAddress: (req) => req.headers.get('x-forwarded-for') ?? 'unknown',
    onResponse: (event) => events.push(event),
  });
  listener = await listenCountingWebCalls(handler);
  origin = `https://127.0.0.1:${listener.port}`;
}, 180_000);

afterAll(async () => {
  await listener?.close();
  await storage?.close();
});

describe('per-client limits on every entry', () => {
  for (const route of ROUTES) {
    it(`${route.class}: ${route.name} — 429 with Retry-After past the limit on both entries, alike; another client is served`, async () => {
      const refusals: Partial<Record<Entry, Reply>> = {};
      for (const entry of ['listener', 'web handler'] as const) {
        client++;
        const flooding = `192.0.2.${client}`;
        const neighbour = `198.51.100.${client}`;
        listener.webCalls = 0;
        events.length = 0;
        logLines.length = 0;
        for (let i = 0; i < LIMIT; i++) {
          const served = await call(entry, route, flooding);
          expect({ entry, i, status: served.status }).not.toMatchObject({ status: 429 });
        }
        const refused = await call(entry, route, flooding);
        expect({ entry, status: refused.status }).toEqual({ entry, status: 429 });
        const retryAfter = Number(refused.headers['retry-after']);
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
        refusals[entry] = refused;

        const other = await call(entry, route, neighbour);
        expect({ entry, status: other.status }).not.toMatchObject({ status: 429 });

        // One metrics event and one log line per request, the refusal marked in both.
        expect(events.map((e) => [e.route, e.status, e.rateLimited ?? false])).toEqual([
          ...Array.from({ length: LIMIT }, () => [route.route, expect.any(Number), false]),
          [route.route, 429, true],
          [route.route, other.status, false],
        ]);
        expect(logLines.map((l) => [l.route, l.status, l.rateLimited ?? false, l.request_id])).toEqual(
          events.map((e) => [e.route, e.status, e.rateLimited ?? false, e.requestId]),
        );
        if (entry === 'listener') expect(listener.webCalls).toBe(route.direct ? 0 : LIMIT + 2);
      }
      const { listener: direct, 'web handler': web } = refusals as Record<Entry, Reply>;
      // The framing (a length or chunks) is the wire's; the nonce differs per answer by design.
      const answerHeaders = (headers: Reply['headers']) => {
        const {
          'replay-nonce': _n,
          'content-length': _l,
          'transfer-encoding': _t,
          ...rest
        } = comparable(headers);
        return rest;
      };
      const [directHeaders, webHeaders] = [answerHeaders(direct.headers), answerHeaders(web.headers)];
      expect(directHeaders).toEqual(webHeaders);
      expect(answerBody(direct)).toEqual(answerBody(web));
    });
  }
});
