import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../../../test/interop/support/https-client.js';
import { createTestTls, serverTlsOptions, type TestTls } from '../../../test/interop/support/tls.js';
import { createApp } from '../src/app.js';
import { openCertwright } from '../src/certwright.js';

const API_KEY = 'example-express-key';
let tls: TestTls;
let server: Server;
let origin: string;
let certwright: Awaited<ReturnType<typeof openCertwright>>;

beforeAll(async () => {
  tls = createTestTls();
  certwright = await openCertwright({ memory: true }, new Uint8Array(32).fill(7));
  server = createServer(serverTlsOptions(tls), createApp({ apiKey: API_KEY, services: certwright.services }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await certwright.close();
});

const get = (path: string, headers?: Record<string, string>) =>
  send({ url: new URL(path, origin), method: 'GET', headers, ca: tls.caPem });

describe('the Express example', () => {
  it('serves the certwright inventory over HTTP and in-process alike', async () => {
    const created = await send({
      url: new URL('/api/v1/owners', origin),
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify({ name: 'Alice', email: 'alice@example.com' })),
      ca: tls.caPem,
    });
    expect(created.status).toBe(201);
    const { id } = JSON.parse(created.body.toString());
    expect((await certwright.services.owners.get(id)).email).toBe('alice@example.com');
  });

  it('serves its own route', async () => {
    const response = await get('/hello');
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body.toString())).toEqual({ hello: 'from express' });
  });

  it('keeps its own JSON parser for its own routes', async () => {
    const response = await send({
      url: new URL('/notes', origin),
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from('{"text":"hi"}'),
      ca: tls.caPem,
    });
    expect(response.status).toBe(201);
    expect(JSON.parse(response.body.toString())).toEqual({ received: { text: 'hi' } });
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
});
