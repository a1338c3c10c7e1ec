import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createAdministratorClient } from '../../net/administrator-client.js';
import { AcmeClient } from './client.js';

/**
 * The ACME client against a scripted server on loopback: what it does with what a CA (or a
 * hostile server posing as one) answers. Real issuance is in test/interop/acme-issuer-*.test.ts.
 */

type Route = (req: IncomingMessage, res: ServerResponse, body: string) => void;
const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

async function scripted(routes: Record<string, Route>): Promise<{ origin: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      hits.push(`${req.method} ${req.url}`);
      const route = routes[req.url ?? ''];
      if (route) route(req, res, body);
      else {
        res.writeHead(404);
        res.end();
      }
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

const accountKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
// The scripted servers listen on loopback: the test-only opt-in admits it.
const loopbackClient = createAdministratorClient({ loopbackForTests: true });
const client = (origin: string, outbound = loopbackClient) =>
  new AcmeClient({
    directoryUrl: `${origin}/dir`,
    outbound,
    accountKey,
    now: () => new Date('2026-01-01T00:00:00Z'),
  });
const json = (res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, {
    'content-type': 'application/json',
    'replay-nonce': `n${Math.random()}`,
    ...headers,
  });
  res.end(JSON.stringify(value));
};
const directory = (origin: string) => ({
  newNonce: `${origin}/nonce`,
  newAccount: `${origin}/account`,
  newOrder: `${origin}/order`,
});
const nonce: Route = (_req, res) => {
  res.writeHead(200, { 'replay-nonce': 'first' });
  res.end();
};

describe('ACME client', () => {
  it('refuses a directory that sends it to another origin, before any request goes there', async () => {
    const { origin, hits } = await scripted({
      '/dir': (_req, res) =>
        json(res, 200, { ...directory('http://169.254.169.254'), newNonce: 'http://169.254.169.254/latest' }),
    });
    await expect(client(origin).directory()).rejects.toMatchObject({
      reason: 'unavailable',
      message: `the ACME server ${origin} could not be fetched; the server log has the cause`,
      cause: { message: expect.stringContaining("outside its directory's origin") },
    });
    expect(hits).toEqual(['GET /dir']);
  });

  it('gives one failure for every directory that cannot be used, the cause kept for the log', async () => {
    const closed = await scripted({});
    const closedOrigin = closed.origin;
    await new Promise<void>((r) => servers.pop()!.close(() => r()));
    const cases: Record<string, Route> = {
      'an HTTP error': (_req, res) => json(res, 500, { type: 'urn:ietf:params:acme:error:serverInternal' }),
      'a page that is not JSON': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>internal wiki</html>');
      },
      'JSON that is no directory': (_req, res) => json(res, 200, [1, 2, 3]),
      'a reset connection': (req) => req.socket.destroy(),
    };
    const failures: { origin: string; error: Error & { cause?: unknown } }[] = [];
    for (const [what, route] of Object.entries(cases)) {
      const { origin } = await scripted({ '/dir': route });
      const error = await client(origin)
        .directory()
        .then(
          () => {
            throw new Error(`${what}: no failure`);
          },
          (e: Error) => e,
        );
      failures.push({ origin, error });
    }
    const nobody = await client(closedOrigin)
      .directory()
      .catch((e: Error) => e);
    failures.push({ origin: closedOrigin, error: nobody as Error });
    for (const { origin, error } of failures) {
      expect(error).toMatchObject({
        code: 'unavailable',
        reason: 'unavailable',
        message: `the ACME server ${origin} could not be fetched; the server log has the cause`,
      });
      expect(error.cause).toBeDefined();
    }
  });

  it('refuses a directory on loopback without the test-only opt-in, without connecting', async () => {
    const { origin, hits } = await scripted({ '/dir': (_req, res) => json(res, 200, directory(origin)) });
    let connections = 0;
    servers.at(-1)!.on('connection', () => {
      connections++;
    });
    await expect(client(origin, createAdministratorClient()).directory()).rejects.toMatchObject({
      reason: 'address_refused',
      extra: { category: 'loopback' },
      fields: [{ field: 'config.directory_url' }],
    });
    expect(connections).toBe(0);
    expect(hits).toEqual([]);
  });

  it('retries a badNonce answer with the fresh nonce it carries, and gives up after five', async () => {
    let accountPosts = 0;
    const badNonce = (res: ServerResponse) =>
      json(
        res,
        400,
        { type: 'urn:ietf:params:acme:error:badNonce', detail: 'stale' },
        { 'replay-nonce': 'fresh' },
      );
    const { origin } = await scripted({
      '/dir': (_req, res) => json(res, 200, directory(origin)),
      '/nonce': nonce,
      '/account': (_req, res, body) => {
        accountPosts++;
        const header = JSON.parse(Buffer.from(JSON.parse(body).protected, 'base64url').toString());
        if (accountPosts === 1) return badNonce(res);
        expect(header.nonce).toBe('fresh');
        json(res, 201, { status: 'valid' }, { location: `${origin}/acct/1` });
      },
    });
    expect(await client(origin).account({})).toBe(`${origin}/acct/1`);
    expect(accountPosts).toBe(2);

    accountPosts = 0;
    const stubborn = await scripted({
      '/dir': (_req, res) => json(res, 200, directory(stubborn.origin)),
      '/nonce': nonce,
      '/account': (_req, res) => {
        accountPosts++;
        badNonce(res);
      },
    });
    await expect(client(stubborn.origin).account({})).rejects.toMatchObject({ reason: 'unavailable' });
    expect(accountPosts).toBe(6);
  });

  it('turns rateLimited into rate_limited with the Retry-After, and refuses a Location on another origin', async () => {
    const { origin } = await scripted({
      '/dir': (_req, res) => json(res, 200, directory(origin)),
      '/nonce': nonce,
      '/account': (_req, res) => json(res, 201, { status: 'valid' }, { location: `${origin}/acct/1` }),
      '/order': (_req, res) =>
        json(
          res,
          429,
          { type: 'urn:ietf:params:acme:error:rateLimited', detail: 'slow down' },
          { 'retry-after': '42' },
        ),
    });
    const acme = client(origin);
    await acme.account({});
    await expect(acme.newOrder({ identifiers: [{ type: 'dns', value: 'a.test' }] })).rejects.toMatchObject({
      reason: 'rate_limited',
      extra: { retry_after_seconds: 42 },
    });

    const elsewhere = await scripted({
      '/dir': (_req, res) => json(res, 200, directory(elsewhere.origin)),
      '/nonce': nonce,
      '/account': (_req, res) => json(res, 201, { status: 'valid' }, { location: 'http://10.1.2.3/acct/1' }),
    });
    await expect(client(elsewhere.origin).account({})).rejects.toMatchObject({
      message: expect.stringContaining("outside its directory's origin"),
    });
  });
});
