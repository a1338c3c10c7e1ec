import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Handler } from '@certwright/core';
import express5 from 'express';
import express4 from 'express4';
import { afterEach, describe, expect, it } from 'vitest';
import { certwright } from '../src/index.js';

/** Reports what the adapter handed over: URL, body bytes, transport. */
const reporter: Handler = async (request, transport) => {
  const body = new Uint8Array(await request.arrayBuffer());
  return Response.json({
    url: request.url,
    method: request.method,
    body: Buffer.from(body).toString('hex'),
    remote_address: transport.remoteAddress,
    tls: transport.tls === undefined ? null : transport.tls.protocol,
  });
};

const failing: Handler = async () => {
  throw new Error('handler failed');
};

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

async function start(app: (req: never, res: never) => void): Promise<string> {
  server = createServer(app as never);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe.each([
  ['Express 5', express5],
  ['Express 4', express4],
] as const)('certwright() on %s', (_name, express) => {
  it('hands over the full original URL, not the path below the mount point', async () => {
    const app = express();
    app.use('/pki', certwright(reporter));
    const origin = await start(app);
    const answer = await (await fetch(`${origin}/pki/api/v1/x?y=1`)).json();
    expect(answer.url).toBe(`${origin}/pki/api/v1/x?y=1`);
  });

  it('passes DER bytes unchanged when an unmatched JSON parser ran first', async () => {
    const app = express();
    app.use(express.json());
    app.use(certwright(reporter));
    const origin = await start(app);
    const der = Uint8Array.from([0x30, 0x82, 0x00, 0x00, 0xff, 0x00, 0x80]);
    const response = await fetch(`${origin}/csr`, {
      method: 'POST',
      headers: { 'content-type': 'application/pkcs10' },
      body: der,
    });
    expect((await response.json()).body).toBe('30820000ff0080');
  });

  it("uses express.raw()'s Buffer", async () => {
    const app = express();
    app.use(express.raw({ type: () => true }));
    app.use(certwright(reporter));
    const origin = await start(app);
    const response = await fetch(`${origin}/csr`, { method: 'POST', body: Uint8Array.from([1, 2, 3]) });
    expect((await response.json()).body).toBe('010203');
  });

  it('reports a body consumed by express.json() through next()', async () => {
    const app = express();
    app.use(express.json());
    app.use(certwright(reporter));
    let seen: unknown;
    app.use((error: unknown, _req: unknown, res: express5.Response, _next: unknown) => {
      seen = error;
      res.status(500).end();
    });
    const origin = await start(app);
    const response = await fetch(`${origin}/x`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(response.status).toBe(500);
    expect(seen).toMatchObject({ code: 'body_already_consumed' });
  });

  it('passes a handler that throws to the error middleware', async () => {
    const app = express();
    app.use(certwright(failing));
    let seen: unknown;
    app.use((error: unknown, _req: unknown, res: express5.Response, _next: unknown) => {
      seen = error;
      res.status(502).end();
    });
    const origin = await start(app);
    expect((await fetch(`${origin}/x`)).status).toBe(502);
    expect(seen).toMatchObject({ message: 'handler failed' });
  });

  it('gives no TLS information over plain HTTP', async () => {
    const app = express();
    app.use(certwright(reporter));
    const origin = await start(app);
    const answer = await (await fetch(`${origin}/x`)).json();
    expect(answer).toMatchObject({ tls: null, remote_address: '127.0.0.1' });
  });
});
