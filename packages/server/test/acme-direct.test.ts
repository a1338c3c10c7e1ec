import { generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { type CertwrightHandler, createHandler, type ResponseEvent } from '@certwright/api';
import {
  createServices,
  SecretBox,
  type Services,
  SYSTEM_ACTOR,
  silentLogger,
  systemClock,
} from '@certwright/core';
import type { createPgliteStorage } from '@certwright/storage-pg';
import { createMigratedPgliteStorage } from '@certwright/storage-pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CountingListener,
  comparable as comparableHeaders,
  listenCountingWebCalls,
  sendRaw,
} from './support/direct-listener.js';

/**
 * The listener answers ACME (directory, new-nonce and every JWS POST) through the handler's
 * direct entry, without a Web Request or Response. What an ACME client sees must not change:
 * the same status, headers (Link, Location, Retry-After, Cache-Control, a Replay-Nonce) and
 * bytes as the Web path, problems and the rate limit included. What the direct entry does not
 * take (another content type, a chunked body, an unknown path) is answered by the Web handler.
 */

interface Reply {
  status: number;
  headers: Record<string, unknown>;
  body: Buffer;
}

const ENROLLMENT_LIMIT = 40;
let storage: Awaited<ReturnType<typeof createPgliteStorage>>;
let services: Services;
let handler: CertwrightHandler;
const NONCE = /^[A-Za-z0-9_-]{16,}$/;
let listener: CountingListener;
let origin: string;
const events: ResponseEvent[] = [];
/** A new client address per test, so that each starts with a full rate limit. */
let client = 0;

function send(
  method: string,
  path: string,
  options: { body?: string; headers?: Record<string, string>; chunked?: boolean } = {},
): Promise<Reply> {
  const body = options.body === undefined ? undefined : Buffer.from(options.body);
  return sendRaw(listener.port, method, path, {
    ...(body ? { body } : {}),
    ...(options.chunked ? { chunked: true } : {}),
    headers: {
      'x-forwarded-for': `198.51.100.${client}`,
      ...(body ? { 'content-type': 'application/jose+json' } : {}),
      ...options.headers,
    },
  });
}

/** The same request through the Web handler, from its own client address. */
async function viaWeb(
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const response = await handler(
    new Request(`${origin}${path}`, {
      method,
      headers: {
        'x-forwarded-for': `203.0.113.${client}`,
        ...(body !== undefined ? { 'content-type': 'application/jose+json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body } : {}),
    }),
    { remoteAddress: `203.0.113.${client}` },
  );
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: Buffer.from(await response.arrayBuffer()),
  };
}

/** Headers both entries must agree on; the nonce, like date and request id, differs per answer. */
const comparable = (headers: Record<string, unknown>) => {
  const { 'replay-nonce': nonce, ...rest } = comparableHeaders(headers);
  expect(nonce).toMatch(NONCE);
  return rest;
};

function expectSame(direct: Reply, web: Reply, what: string) {
  expect({ what, status: direct.status }).toEqual({ what, status: web.status });
  expect(comparable(direct.headers)).toEqual(comparable(web.headers));
  expect(direct.body.toString()).toBe(web.body.toString());
}

const b64u = (data: Buffer | string) => Buffer.from(data).toString('base64url');

/** An ES256 account key and a flattened-JWS signer (RFC 7515, RFC 8555 §6.2). */
function accountKey() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  return { privateKey, jwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y } };
}

function jws(
  key: { privateKey: KeyObject; jwk: Record<string, unknown> },
  header: { url: string; nonce: string; kid?: string },
  payload: unknown,
): string {
  const protectedHeader = b64u(
    JSON.stringify({
      alg: 'ES256',
      url: header.url,
      nonce: header.nonce,
      ...(header.kid ? { kid: header.kid } : { jwk: key.jwk }),
    }),
  );
  const body = b64u(payload === '' ? '' : JSON.stringify(payload));
  const signature = sign('sha256', Buffer.from(`${protectedHeader}.${body}`), {
    key: key.privateKey,
    dsaEncoding: 'ieee-p1363',
  });
  return JSON.stringify({ protected: protectedHeader, payload: body, signature: b64u(signature) });
}

async function nonce(): Promise<string> {
  return (await send('HEAD', '/acme/new-nonce')).headers['replay-nonce'] as string;
}

/** POSTs the same signed request through the listener and the Web handler, each with its own nonce. */
async function both(
  key: ReturnType<typeof accountKey>,
  path: string,
  payload: unknown,
  kid?: string,
): Promise<[Reply, Reply]> {
  const url = `${origin}${path}`;
  const direct = await send('POST', path, { body: jws(key, { url, nonce: await nonce(), kid }, payload) });
  const web = await viaWeb('POST', path, jws(key, { url, nonce: await nonce(), kid }, payload));
  return [direct, web];
}

beforeAll(async () => {
  storage = await createMigratedPgliteStorage({
    secretBox: new SecretBox(randomBytes(32)),
    clock: systemClock,
  });
  services = createServices({ storage, clock: systemClock, logger: silentLogger });
  await services.profiles.update(SYSTEM_ACTOR, 'prof-default', {
    acme: {
      enabled: true,
      auth_mode: 'trust_authenticated',
      rate_limits: { orders_per_account_per_hour: null, accounts_per_ip_per_hour: null },
    },
  });
  handler = createHandler({
    auth: { type: 'none' },
    services,
    rateLimits: { enrollment: ENROLLMENT_LIMIT },
    clientAddress: (req) => req.headers.get('x-forwarded-for') ?? 'unknown',
    onResponse: (event) => events.push(event),
  });
  listener = await listenCountingWebCalls(handler);
  // The listener builds URLs on https (the server's own listener is TLS); the Web requests do too.
  origin = `https://127.0.0.1:${listener.port}`;
}, 180_000);

afterAll(async () => {
  await listener?.close();
  await storage?.close();
});

describe("the server's listener answering ACME directly", () => {
  it('answers directory and new-nonce (GET and HEAD) like the Web handler', async () => {
    client++;
    listener.webCalls = 0;
    for (const [method, path] of [
      ['GET', '/acme/directory'],
      ['HEAD', '/acme/directory'],
      ['HEAD', '/acme/new-nonce'],
      ['GET', '/acme/new-nonce'],
      ['GET', '/acme/profile/no-such-profile/directory'],
    ] as const) {
      const direct = await send(method, path);
      const web = await viaWeb(method, path);
      expectSame(direct, web, `${method} ${path}`);
    }
    expect(listener.webCalls).toBe(0);
  });

  it('creates an account, then answers new-account, new-order, order and finalize like the Web handler', async () => {
    client++;
    listener.webCalls = 0;
    const key = accountKey();
    const url = `${origin}/acme/new-account`;
    const created = await send('POST', '/acme/new-account', {
      body: jws(key, { url, nonce: await nonce() }, { termsOfServiceAgreed: true }),
    });
    expect(created.status).toBe(201);
    const kid = created.headers.location as string;
    expect(kid).toMatch(new RegExp(`^${origin}/acme/account/`));
    expect(created.headers.link).toBe(`<${origin}/acme/directory>;rel="index"`);

    const [existing, existingWeb] = await both(key, '/acme/new-account', { onlyReturnExisting: true });
    expect(existing.status).toBe(200);
    expectSame(existing, existingWeb, 'new-account, existing');

    // Two orders: the same answer but for the ids of the order and its authorization.
    const identifiers = { identifiers: [{ type: 'dns', value: 'direct.example.com' }] };
    const [order, orderWeb] = await both(key, '/acme/new-order', identifiers, kid);
    expect(order.status).toBe(201);
    const location = order.headers.location as string;
    const ids = (reply: Reply) => {
      const orderId = (reply.headers.location as string).split('/').pop()!;
      const authz = (JSON.parse(reply.body.toString()) as { authorizations: string[] }).authorizations;
      return [orderId, ...authz.map((a) => a.split('/').pop()!)];
    };
    const normalize = (reply: Reply): Reply => {
      // The orders' expiry is their creation time plus the profile's lifetime: milliseconds apart.
      let text = reply.body.toString().replace(/"expires":"[^"]+"/, '"expires":"…"');
      let loc = reply.headers.location as string;
      ids(reply).forEach((id, i) => {
        text = text.replaceAll(id, `id${i}`);
        loc = loc.replaceAll(id, `id${i}`);
      });
      const body = Buffer.from(text);
      return {
        ...reply,
        body,
        headers: { ...reply.headers, location: loc, 'content-length': String(body.length) },
      };
    };
    expectSame(normalize(order), normalize(orderWeb), 'new-order');

    const orderPath = new URL(location).pathname;
    const [polled, polledWeb] = await both(key, orderPath, '', kid);
    expect(polled.status).toBe(200);
    expectSame(polled, polledWeb, 'order, POST-as-GET');

    const authzPath = new URL(
      (JSON.parse(order.body.toString()) as { authorizations: string[] }).authorizations[0]!,
    ).pathname;
    const [authz, authzWeb] = await both(key, authzPath, '', kid);
    expectSame(authz, authzWeb, 'authorization');

    const [finalize, finalizeWeb] = await both(key, `${orderPath}/finalize`, { csr: 'AAAA' }, kid);
    expect(finalize.status).toBeGreaterThanOrEqual(400);
    expect(finalize.headers['content-type']).toBe('application/problem+json');
    expectSame(finalize, finalizeWeb, 'finalize, a CSR that is none');
    expect(listener.webCalls).toBe(0);
  });

  it('answers refused JWS requests with the same problem documents', async () => {
    client++;
    listener.webCalls = 0;
    const key = accountKey();
    const path = '/acme/new-order';
    const url = `${origin}${path}`;
    const payload = { identifiers: [{ type: 'dns', value: 'x.example.com' }] };
    const cases: [string, (n: string) => string][] = [
      ['a nonce the server never issued', () => jws(key, { url, nonce: 'AAAAAAAAAAAAAAAAAAAAAA' }, payload)],
      ['a url other than the one requested', (n) => jws(key, { url: `${url}x`, nonce: n }, payload)],
      ['an unknown kid', (n) => jws(key, { url, nonce: n, kid: `${origin}/acme/account/nope` }, payload)],
      ['a jwk where a kid is needed', (n) => jws(key, { url, nonce: n }, payload)],
      ['a body that is no JWS', () => '{"protected":'],
    ];
    for (const [what, body] of cases) {
      const direct = await send('POST', path, { body: body(await nonce()) });
      const web = await viaWeb('POST', path, body(await nonce()));
      expect(direct.status).toBeGreaterThanOrEqual(400);
      expectSame(direct, web, what);
    }
    expect(listener.webCalls).toBe(0);
    // A GET on a POST resource is no direct request: the Web handler answers 405 with Allow.
    const get = await send('GET', path);
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
    expectSame(get, await viaWeb('GET', path), 'GET new-order');
    expect(listener.webCalls).toBe(1);
  });

  it('leaves another content type, a chunked body and an unknown path to the Web handler, with the same answers', async () => {
    client++;
    listener.webCalls = 0;
    const key = accountKey();
    const path = '/acme/new-account';
    const body = () => jws(key, { url: `${origin}${path}`, nonce: 'n' }, {});
    const wrongType = await send('POST', path, {
      body: body(),
      headers: { 'content-type': 'application/json' },
    });
    expect(wrongType.status).toBe(415);
    expectSame(
      wrongType,
      await viaWeb('POST', path, body(), { 'content-type': 'application/json' }),
      'application/json',
    );
    const chunked = await send('POST', path, { body: body(), chunked: true });
    expect(chunked.headers['transfer-encoding']).toBeUndefined();
    expectSame(chunked, await viaWeb('POST', path, body()), 'chunked');
    expectSame(await send('GET', '/acme/nothing'), await viaWeb('GET', '/acme/nothing'), 'unknown path');
    expect(listener.webCalls).toBe(3);
  });

  it('holds a client to the enrollment rate limit with the same rateLimited problem, and reports every answer', async () => {
    client++;
    const before = events.length;
    for (let i = 0; i < ENROLLMENT_LIMIT; i++) {
      expect((await send('HEAD', '/acme/new-nonce')).status).toBe(200);
      await viaWeb('HEAD', '/acme/new-nonce');
    }
    const direct = await send('GET', '/acme/directory');
    const web = await viaWeb('GET', '/acme/directory');
    expect(direct.status).toBe(429);
    expect(direct.headers['retry-after']).toMatch(/^\d+$/);
    expect(JSON.parse(direct.body.toString()).type).toBe('urn:ietf:params:acme:error:rateLimited');
    expect({ ...comparable(direct.headers), 'transfer-encoding': undefined }).toEqual({
      ...comparable(web.headers),
      'transfer-encoding': undefined,
    });
    expect(direct.body.toString()).toBe(web.body.toString());
    // Each answer, direct or not, was reported once with its route and status.
    const reported = events.slice(before);
    expect(reported).toHaveLength(2 * ENROLLMENT_LIMIT + 2);
    expect(reported.every((e) => e.route === '/acme/{path}')).toBe(true);
    expect(reported.filter((e) => e.status === 429)).toHaveLength(2);
  });
});
