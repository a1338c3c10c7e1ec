import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { requestOrigin, sendWebResponse, toWebRequest } from '../../src/node/index.js';
import { readBodyBytes } from '../../src/web/body.js';

/** A node:http server whose requests go through the bridge to `handler`. */
async function serve(handler: (request: Request, req: IncomingMessage) => Promise<Response>) {
  const server = createServer((req, res) => {
    const request = toWebRequest(req, {
      origin: requestOrigin('http', req.headers.host, req.socket.localPort),
    });
    handler(request, req)
      .then((response) => sendWebResponse(res, response, req.method))
      .catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

describe('Node bridge', () => {
  it('hands over a body sent in many chunks byte for byte, and repeated headers in order', async () => {
    const origin = await serve(async (request) => {
      const bytes = new Uint8Array(await request.arrayBuffer());
      return new Response(
        JSON.stringify({
          length: bytes.length,
          sum: bytes.reduce((a, b) => (a * 31 + b) >>> 0, 7),
          x: request.headers.get('x-twice'),
          method: request.method,
          url: request.url,
        }),
      );
    });
    const chunks = Array.from({ length: 40 }, (_, i) => Buffer.alloc(4096 + i, i));
    const all = Buffer.concat(chunks);
    const answer = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(
        `${origin}/upload?a=1`,
        { method: 'PUT', headers: { 'x-twice': ['one', 'two'] } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve(text));
        },
      );
      req.on('error', reject);
      (async () => {
        for (const chunk of chunks) {
          req.write(chunk);
          await new Promise((r) => setImmediate(r));
        }
        req.end();
      })().catch(reject);
    });
    expect(JSON.parse(answer)).toEqual({
      length: all.length,
      sum: all.reduce((a, b) => (a * 31 + b) >>> 0, 7),
      x: 'one, two',
      method: 'PUT',
      url: `${origin}/upload?a=1`,
    });
  });

  it('stops reading a body over the reader’s limit, still answers, then closes the connection', async () => {
    let seen: unknown;
    let bytesRead = 0;
    const origin = await serve(async (request, req) => {
      seen = await readBodyBytes(request, 10_000).catch((error: unknown) => error);
      req.socket.once('close', () => (bytesRead = req.socket.bytesRead));
      return new Response('too large', { status: 413, headers: { 'content-length': '9' } });
    });
    const total = 400 * 64 * 1024;
    const outcome = await new Promise<{ status?: number; body?: string; closed: boolean }>((resolve) => {
      const req = httpRequest(`${origin}/big`, { method: 'POST' }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => {
          res.socket.once('close', () => resolve({ status: res.statusCode, body, closed: true }));
          if (res.socket.destroyed) resolve({ status: res.statusCode, body, closed: true });
        });
      });
      req.on('error', () => {});
      const chunk = Buffer.alloc(64 * 1024, 1);
      let sent = 0;
      const pump = () => {
        while (sent < 400 && !req.destroyed) {
          sent++;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
    expect(outcome).toEqual({ status: 413, body: 'too large', closed: true });
    expect(seen).toMatchObject({ code: 'payload_too_large' });
    await expect.poll(() => bytesRead, { timeout: 20_000 }).toBeGreaterThan(0);
    expect(bytesRead).toBeLessThan(total / 2);
  });

  it('errors the body and aborts the signal when the client goes away mid-body', async () => {
    let bodyError: unknown;
    let aborted: Promise<boolean> | undefined;
    let reachedResolve!: () => void;
    const reached = new Promise<void>((resolve) => (reachedResolve = resolve));
    const origin = await serve(async (request) => {
      const signal = request.signal;
      aborted = new Promise<boolean>((resolve) => {
        if (signal.aborted) resolve(true);
        signal.addEventListener('abort', () => resolve(true));
        setTimeout(() => resolve(false), 20_000);
      });
      reachedResolve();
      bodyError = await request.arrayBuffer().then(
        () => 'read',
        (error: unknown) => error,
      );
      return new Response('x');
    });
    const req = httpRequest(`${origin}/partial`, { method: 'POST', headers: { 'content-length': '100000' } });
    req.on('error', () => {});
    req.write(Buffer.alloc(1000, 2));
    await reached;
    req.destroy();
    expect(await aborted).toBe(true);
    await expect.poll(() => bodyError, { timeout: 20_000 }).toBeInstanceOf(Error);
  });

  it('gives a GET no body and answers HEAD without one', async () => {
    const origin = await serve(async (request) => {
      expect(request.body).toBeNull();
      return new Response('hello', { headers: { 'content-length': '5', 'set-cookie': 'a=1' } });
    });
    const head = await fetch(`${origin}/x`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('5');
    expect(await head.text()).toBe('');
    const get = await fetch(`${origin}/x`);
    expect(await get.text()).toBe('hello');
    expect(get.headers.getSetCookie()).toEqual(['a=1']);
  });
});
