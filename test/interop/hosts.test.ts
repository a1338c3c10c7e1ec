/**
 * Host conformance: one handler behind the server's own Node listener, Express and Fastify,
 * all on real TLS 1.3, must answer the same requests with the same status, the headers that
 * matter and the same body bytes. The Node listener is the reference; each framework host
 * is compared to it field by field.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { certwright } from '@certwright/host-express';
import { certwrightPlugin } from '@certwright/host-fastify';
import { createRequestListener } from '@certwright/server';
import express from 'express';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BINARY_RESPONSE, conformanceHandler, STREAM_CHUNKS } from './support/conformance-handler.js';
import { type RawResponse, send } from './support/https-client.js';
import { createTestTls, serverTlsOptions, type TestTls } from './support/tls.js';

const PREFIX = '/cw';
/** Added by the hosts themselves or by the connection, not by the handler. */
const HOST_OWNED_HEADERS = new Set(['date', 'connection', 'keep-alive', 'x-powered-by', 'x-app-header']);

type HostName = 'node-listener' | 'express' | 'fastify';
interface Host {
  name: HostName;
  origin: string;
  close(): Promise<void>;
}

let tls: TestTls;
const hosts = new Map<HostName, Host>();

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

async function startNodeListener(): Promise<Host> {
  const server = createServer(serverTlsOptions(tls), createRequestListener(conformanceHandler));
  return { name: 'node-listener', origin: await listen(server), close: () => closeServer(server) };
}

async function startExpress(): Promise<Host> {
  const app = express();
  app.get('/own', (_req, res) => {
    res.send('express route');
  });
  // Stands for CORS/security middleware: headers set before certwright must survive.
  app.use((req, res, next) => {
    res.setHeader('x-app-header', 'express');
    // The handler sets this one on /cookies too; the handler's value must win.
    if (req.path.endsWith('/cookies')) res.setHeader('x-certwright-test', 'from the app');
    next();
  });
  app.use(PREFIX, certwright(conformanceHandler));
  // Mounted behind a raw body parser: the adapter must take the parser's Buffer.
  app.use('/after-raw', express.raw({ type: () => true, limit: '1mb' }), certwright(conformanceHandler));
  // Mounted behind a JSON parser, which consumes the stream: the adapter must refuse.
  app.use('/after-json', express.json(), certwright(conformanceHandler));
  app.use(
    (error: Error & { code?: string }, _req: express.Request, res: express.Response, _next: unknown) => {
      res.status(500).json({ name: error.name, code: error.code });
    },
  );
  const server = createServer(serverTlsOptions(tls), app);
  return { name: 'express', origin: await listen(server), close: () => closeServer(server) };
}

async function startFastify(): Promise<Host> {
  const app = Fastify({ https: serverTlsOptions(tls) });
  // A sibling route outside the plugin keeps Fastify's JSON parser.
  app.post('/own-json', async (request) => ({ parsed: request.body }));
  // Stands for CORS/security hooks: headers set with reply.header() must survive the hijack.
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-app-header', 'fastify');
    // The handler sets this one on /cookies too; the handler's value must win.
    if (request.url.endsWith('/cookies')) reply.header('x-certwright-test', 'from the app');
  });
  await app.register(certwrightPlugin, { handler: conformanceHandler, prefix: PREFIX });
  const origin = await app.listen({ port: 0, host: '127.0.0.1' });
  return { name: 'fastify', origin, close: () => app.close() };
}

beforeAll(async () => {
  tls = createTestTls();
  hosts.set('node-listener', await startNodeListener());
  hosts.set('express', await startExpress());
  hosts.set('fastify', await startFastify());
});

afterAll(async () => {
  for (const host of hosts.values()) await host.close();
});

interface Case {
  name: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Uint8Array;
  chunked?: boolean;
  clientCertificate?: boolean;
  /** What the reference answer must show, beyond all hosts agreeing. */
  expect(response: RawResponse): void;
}

const payload = randomBytes(64 * 1024);
const payloadSha = createHash('sha256').update(payload).digest('hex');
/** Bytes that are neither valid UTF-8 nor JSON, to catch any host that decodes them. */
const notJson = Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0x80]), payload.subarray(0, 1024)]);

const echoesBody = (bytes: Uint8Array) => (response: RawResponse) => {
  expect(response.status).toBe(200);
  expect(Buffer.compare(response.body, Buffer.from(bytes))).toBe(0);
  expect(response.headers.get('x-echo-body-sha256')).toEqual([
    createHash('sha256').update(bytes).digest('hex'),
  ]);
};

const cases: Case[] = [
  {
    name: 'GET with a repeated query parameter and a custom header',
    method: 'GET',
    path: `${PREFIX}/echo?a=1&b=%C3%A9&a=2`,
    headers: { 'x-custom': 'custom value', accept: 'application/json' },
    expect(response) {
      expect(response.status).toBe(200);
      expect(response.headers.get('x-echo-path')).toEqual([`${PREFIX}/echo?a=1&b=%C3%A9&a=2`]);
      expect(response.headers.get('x-echo-query-a')).toEqual(['1,2']);
      expect(response.headers.get('x-echo-custom')).toEqual(['custom value']);
      expect(response.body.byteLength).toBe(0);
    },
  },
  {
    name: 'binary 64 KiB body as application/pkcs10',
    method: 'POST',
    path: `${PREFIX}/echo`,
    headers: { 'content-type': 'application/pkcs10' },
    body: payload,
    expect: echoesBody(payload),
  },
  {
    name: 'binary 64 KiB body mislabelled application/json',
    method: 'POST',
    path: `${PREFIX}/echo`,
    headers: { 'content-type': 'application/json' },
    body: payload,
    expect: echoesBody(payload),
  },
  {
    name: 'binary 64 KiB body without a content type',
    method: 'PUT',
    path: `${PREFIX}/echo`,
    body: payload,
    expect(response) {
      echoesBody(payload)(response);
      expect(response.headers.get('x-echo-content-type')).toEqual(['(none)']);
      expect(response.headers.get('x-echo-method')).toEqual(['PUT']);
    },
  },
  {
    name: 'chunked upload of non-UTF-8 bytes as application/x-www-form-urlencoded',
    method: 'POST',
    path: `${PREFIX}/echo`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: notJson,
    chunked: true,
    expect: echoesBody(notJson),
  },
  {
    name: 'streamed multi-chunk response',
    method: 'GET',
    path: `${PREFIX}/stream`,
    expect(response) {
      expect(response.status).toBe(200);
      expect(response.headers.get('transfer-encoding')).toEqual(['chunked']);
      expect(response.body.toString('utf8')).toBe(STREAM_CHUNKS.join(''));
    },
  },
  {
    name: 'several Set-Cookie and repeated custom headers',
    method: 'GET',
    path: `${PREFIX}/cookies`,
    expect(response) {
      expect(response.headers.get('set-cookie')).toEqual([
        'a=1; Path=/; HttpOnly; Secure',
        'b=2; Path=/; Expires=Wed, 21 Oct 2099 07:28:00 GMT',
      ]);
      expect(response.headers.get('x-multi')).toEqual(['first, second']);
    },
  },
  {
    name: 'binary response with a declared length',
    method: 'GET',
    path: `${PREFIX}/binary`,
    expect(response) {
      expect(response.headers.get('content-type')).toEqual(['application/pkix-cert']);
      expect(response.headers.get('content-length')).toEqual(['256']);
      expect(Buffer.compare(response.body, Buffer.from(BINARY_RESPONSE))).toBe(0);
    },
  },
  {
    name: 'HEAD sends the headers and no body',
    method: 'HEAD',
    path: `${PREFIX}/binary`,
    expect(response) {
      expect(response.status).toBe(200);
      expect(response.headers.get('content-length')).toEqual(['256']);
      expect(response.body.byteLength).toBe(0);
    },
  },
  {
    name: '204 without a body',
    method: 'DELETE',
    path: `${PREFIX}/empty`,
    expect(response) {
      expect(response.status).toBe(204);
      expect(response.headers.get('x-certwright-test')).toEqual(['empty']);
      expect(response.body.byteLength).toBe(0);
    },
  },
  {
    name: "the handler's own 404",
    method: 'GET',
    path: `${PREFIX}/no/such/route`,
    expect(response) {
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toEqual(['application/problem+json']);
      expect(JSON.parse(response.body.toString('utf8'))).toMatchObject({ status: 404 });
    },
  },
  {
    name: 'a client certificate is visible to the handler over mTLS',
    method: 'GET',
    path: `${PREFIX}/tls`,
    clientCertificate: true,
    expect(response) {
      const leafSha = createHash('sha256').update(tls.clientCertDer).digest('hex');
      expect(JSON.parse(response.body.toString('utf8'))).toMatchObject({
        remote_address: '127.0.0.1',
        protocol: 'TLSv1.3',
        leaf_sha256: leafSha,
        exporter_length: 32,
      });
    },
  },
  {
    name: 'no client certificate leaves the chain empty',
    method: 'GET',
    path: `${PREFIX}/tls`,
    expect(response) {
      expect(JSON.parse(response.body.toString('utf8'))).toMatchObject({
        protocol: 'TLSv1.3',
        chain_length: 0,
        leaf_sha256: null,
      });
    },
  },
];

function request(host: Host, testCase: Omit<Case, 'name' | 'expect'>): Promise<RawResponse> {
  return send({
    url: new URL(testCase.path, host.origin),
    method: testCase.method,
    headers: testCase.headers,
    body: testCase.body,
    chunked: testCase.chunked,
    ca: tls.caPem,
    ...(testCase.clientCertificate ? { cert: tls.clientCertPem, key: tls.clientKeyPem } : {}),
  });
}

/** Everything but the host-owned headers, and the origin echo (each host has its own port). */
function comparable(response: RawResponse) {
  const headers = [...response.headers]
    .filter(([name]) => !HOST_OWNED_HEADERS.has(name) && name !== 'x-echo-origin')
    .sort(([a], [b]) => a.localeCompare(b));
  return { status: response.status, headers, body: response.body.toString('base64') };
}

describe.each(['express', 'fastify'] as const)('%s host conforms to the Node listener', (hostName) => {
  it.each(cases)('$name', async (testCase) => {
    const reference = await request(hosts.get('node-listener')!, testCase);
    testCase.expect(reference);
    const answer = await request(hosts.get(hostName)!, testCase);
    testCase.expect(answer);
    expect(comparable(answer)).toEqual(comparable(reference));
  });

  it('hands the handler the full URL, prefix included, on the origin the client used', async () => {
    const host = hosts.get(hostName)!;
    const response = await request(host, { method: 'GET', path: `${PREFIX}/deeper/echo?x=1` });
    expect(response.headers.get('x-echo-path')).toEqual([`${PREFIX}/deeper/echo?x=1`]);
    expect(response.headers.get('x-echo-origin')).toEqual([host.origin]);
  });

  it('does not trust a malformed Host header into the URL', async () => {
    const host = hosts.get(hostName)!;
    const response = await request(host, {
      method: 'GET',
      path: `${PREFIX}/echo`,
      headers: { host: 'attacker@evil.example' },
    });
    expect(response.status).toBe(200);
    const port = new URL(host.origin).port;
    expect(response.headers.get('x-echo-origin')).toEqual([`https://localhost:${port}`]);
  });

  it("keeps headers the app set before the handler, letting the handler's own win", async () => {
    const response = await request(hosts.get(hostName)!, { method: 'GET', path: `${PREFIX}/cookies` });
    expect(response.headers.get('x-app-header')).toEqual([hostName]);
    expect(response.headers.get('x-certwright-test')).toEqual(['one']);
  });

  it('cuts the connection when the response body fails half-way, never ending it cleanly', async () => {
    await expect(
      request(hosts.get(hostName)!, { method: 'GET', path: `${PREFIX}/broken-stream` }),
    ).rejects.toThrow();
  });
});

describe('the Node listener', () => {
  it('cuts the connection when the response body fails half-way, never ending it cleanly', async () => {
    await expect(
      request(hosts.get('node-listener')!, { method: 'GET', path: `${PREFIX}/broken-stream` }),
    ).rejects.toThrow();
  });
});

describe('Express specifics', () => {
  it('serves its own routes beside the mounted handler', async () => {
    const response = await request(hosts.get('express')!, { method: 'GET', path: '/own' });
    expect(response.body.toString('utf8')).toBe('express route');
  });

  it("uses express.raw()'s Buffer when that parser ran first", async () => {
    const response = await request(hosts.get('express')!, {
      method: 'POST',
      path: '/after-raw/echo',
      headers: { 'content-type': 'application/pkcs10' },
      body: payload,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-echo-body-sha256')).toEqual([payloadSha]);
  });

  it('refuses, through next(), a body that express.json() already consumed', async () => {
    const response = await request(hosts.get('express')!, {
      method: 'POST',
      path: '/after-json/echo',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from('{"a":1}'),
    });
    expect(response.status).toBe(500);
    expect(JSON.parse(response.body.toString('utf8'))).toEqual({
      name: 'BodyAlreadyConsumedError',
      code: 'body_already_consumed',
    });
  });
});

describe('Fastify specifics', () => {
  it('keeps content-type parsers for routes outside the plugin scope', async () => {
    const response = await request(hosts.get('fastify')!, {
      method: 'POST',
      path: '/own-json',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from('{"a":1}'),
    });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body.toString('utf8'))).toEqual({ parsed: { a: 1 } });
  });
});

describe('Fastify plugin registered without a prefix', () => {
  it("serves everything the app's own routes do not, which keep their parsers", async () => {
    const app = Fastify();
    app.post('/own-json', async (request) => ({ parsed: request.body }));
    await app.register(certwrightPlugin, { handler: conformanceHandler });
    try {
      const own = await app.inject({ method: 'POST', url: '/own-json', payload: { a: 1 } });
      expect(own.json()).toEqual({ parsed: { a: 1 } });
      const root = await app.inject({ method: 'GET', url: '/echo?a=3' });
      expect(root.headers['x-echo-path']).toBe('/echo?a=3');
      const nested = await app.inject({ method: 'GET', url: '/some/deeper/path' });
      expect(nested.statusCode).toBe(404);
      expect(nested.headers['content-type']).toBe('application/problem+json');
    } finally {
      await app.close();
    }
  });
});
