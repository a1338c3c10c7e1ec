import type { Handler } from '@certwright/core';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { certwrightPlugin } from '../src/index.js';

/** Reports what the plugin handed over: URL, method, body bytes, transport. */
const reporter: Handler = async (request, transport) => {
  const body = new Uint8Array(await request.arrayBuffer());
  return Response.json({
    url: request.url,
    method: request.method,
    body: Buffer.from(body).toString('hex'),
    tls: transport.tls === undefined ? null : transport.tls.protocol,
  });
};

let app = Fastify();
afterEach(async () => {
  await app.close();
  app = Fastify();
});

describe('certwrightPlugin', () => {
  it('hands over the full URL with the register prefix still in it', async () => {
    await app.register(certwrightPlugin, { handler: reporter, prefix: '/api/v1' });
    const answer = (
      await app.inject({ url: '/api/v1/certificates?page=2', headers: { host: 'pki.test' } })
    ).json();
    expect(answer.url).toBe('http://pki.test/api/v1/certificates?page=2');
    const bare = (await app.inject({ url: '/api/v1', headers: { host: 'pki.test' } })).json();
    expect(bare.url).toBe('http://pki.test/api/v1');
  });

  it('leaves requests outside the prefix to Fastify', async () => {
    await app.register(certwrightPlugin, { handler: reporter, prefix: '/api/v1' });
    const response = await app.inject({ url: '/elsewhere' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ error: 'Not Found' });
  });

  it.each([
    ['application/json', 'application/json'],
    ['text/plain', 'text/plain; charset=utf-8'],
    ['an unknown type', 'application/pkcs7-mime; smime-type=CertsOnly'],
  ])('passes bytes labelled %s unparsed', async (_label, contentType) => {
    await app.register(certwrightPlugin, { handler: reporter });
    const bytes = Buffer.from([0xff, 0x7b, 0x00, 0x80, 0x22]);
    const response = await app.inject({
      method: 'POST',
      url: '/submit',
      headers: { 'content-type': contentType },
      payload: bytes,
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().body).toBe(bytes.toString('hex'));
  });

  it('routes every method, HEAD included, to the handler', async () => {
    await app.register(certwrightPlugin, { handler: reporter });
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const) {
      expect((await app.inject({ method, url: '/m' })).json().method).toBe(method);
    }
    const head = await app.inject({ method: 'HEAD', url: '/m' });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-type']).toBe('application/json');
    expect(head.body).toBe('');
  });

  it("lets Fastify's error handler answer when the handler throws", async () => {
    await app.register(certwrightPlugin, {
      handler: async () => {
        throw new Error('handler failed');
      },
    });
    const response = await app.inject({ url: '/x' });
    expect(response.statusCode).toBe(500);
  });

  it('gives no TLS information without TLS', async () => {
    await app.register(certwrightPlugin, { handler: reporter });
    expect((await app.inject({ url: '/x' })).json().tls).toBeNull();
  });
});
