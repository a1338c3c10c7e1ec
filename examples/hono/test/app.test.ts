import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import { type HttpBindings, serve } from '@hono/node-server';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conformanceHandler } from '../../../test/interop/support/conformance-handler.js';
import { send } from '../../../test/interop/support/https-client.js';
import { createTestTls, serverTlsOptions, type TestTls } from '../../../test/interop/support/tls.js';
import { createApp, transportOf } from '../src/app.js';

const API_KEY = 'example-hono-key';
let tls: TestTls;
let server: Server;
let origin: string;

/** The host-conformance handler mounted the way the example mounts certwright. */
function withConformanceRoutes(app: Hono<{ Bindings: HttpBindings }>) {
  app.all('/cw/*', (c) => conformanceHandler(c.req.raw, transportOf(c)));
  return app;
}

beforeAll(async () => {
  tls = createTestTls();
  await new Promise<void>((resolve) => {
    server = serve(
      {
        fetch: withConformanceRoutes(createApp({ apiKey: API_KEY })).fetch,
        createServer,
        serverOptions: serverTlsOptions(tls),
        port: 0,
        hostname: '127.0.0.1',
      },
      (info) => {
        origin = `https://127.0.0.1:${info.port}`;
        resolve();
      },
    ) as Server;
  });
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const get = (path: string, headers?: Record<string, string>, clientCertificate = false) =>
  send({
    url: new URL(path, origin),
    method: 'GET',
    headers,
    ca: tls.caPem,
    ...(clientCertificate ? { cert: tls.clientCertPem, key: tls.clientKeyPem } : {}),
  });

describe('the Hono example', () => {
  it('serves its own route', async () => {
    const response = await get('/hello');
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body.toString())).toEqual({ hello: 'from hono' });
  });

  it('answers /health through the certwright handler', async () => {
    const response = await get('/health');
    expect(response.status).toBe(200);
  });

  it('answers /api/v1/version through the certwright handler', async () => {
    const response = await get('/api/v1/version');
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body.toString())).toHaveProperty('version');
  });

  it('protects the rest of /api/v1 with the API key', async () => {
    expect((await get('/api/v1/openapi.json')).status).toBe(401);
    const response = await get('/api/v1/openapi.json', { authorization: `Bearer ${API_KEY}` });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body.toString())).toHaveProperty('openapi');
  });

  it('gives the handler the exact request bytes', async () => {
    const body = randomBytes(64 * 1024);
    const response = await send({
      url: new URL('/cw/echo', origin),
      method: 'POST',
      headers: { 'content-type': 'application/pkcs10' },
      body,
      ca: tls.caPem,
    });
    expect(response.status).toBe(200);
    expect(Buffer.compare(response.body, body)).toBe(0);
  });

  it('gives the handler the client certificate through c.env.incoming.socket', async () => {
    const response = await get('/cw/tls', undefined, true);
    expect(JSON.parse(response.body.toString())).toMatchObject({
      protocol: 'TLSv1.3',
      leaf_sha256: createHash('sha256').update(tls.clientCertDer).digest('hex'),
    });
  });
});
