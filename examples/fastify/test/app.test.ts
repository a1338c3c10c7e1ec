import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../../../test/interop/support/https-client.js';
import { createTestTls, serverTlsOptions, type TestTls } from '../../../test/interop/support/tls.js';
import { buildApp } from '../src/app.js';

const API_KEY = 'example-fastify-key';
let tls: TestTls;
let app: Awaited<ReturnType<typeof buildApp>>;
let origin: string;

beforeAll(async () => {
  tls = createTestTls();
  app = await buildApp({ apiKey: API_KEY, https: serverTlsOptions(tls) });
  origin = await app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(() => app.close());

const get = (path: string, headers?: Record<string, string>) =>
  send({ url: new URL(path, origin), method: 'GET', headers, ca: tls.caPem });

describe('the Fastify example', () => {
  it('serves its own route', async () => {
    const response = await get('/hello');
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body.toString())).toEqual({ hello: 'from fastify' });
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
