import { once } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isCertwrightError } from '../../src/errors.js';
import {
  createOutboundClient,
  dnsServerResolver,
  type OutboundClientOptions,
  parseAllowlist,
  type Resolver,
  staticResolver,
} from '../../src/net/index.js';
import { certificateToPem, exportPkcs8Pem } from '../../src/pki/index.js';
import { issueLeaf, makeHierarchy } from '../pki/fixtures.js';
import { startDnsServer } from './dns-server.js';

/**
 * Real deliveries to receivers on loopback. They are reachable only because each client here
 * opts into loopback explicitly (`loopback: 'when-listed'` and an allowlist entry inside
 * 127.0.0.0/8) — a setting production webhook configuration cannot express.
 */

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const seen: Seen[] = [];
let httpServer: http.Server;
let httpsServer: https.Server;
let alpnServer: tls.Server;
let otherServer: http.Server;
let httpPort = 0;
let httpsPort = 0;
let alpnPort = 0;
let otherPort = 0;
let rootPem = '';
let leafDer: Buffer;
const sniSeen: (string | false | undefined)[] = [];

function handler(req: http.IncomingMessage, res: http.ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const url = new URL(req.url ?? '/', 'http://x');
    seen.push({
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body: Buffer.concat(chunks).toString(),
    });
    switch (url.pathname) {
      case '/ok':
        res.writeHead(200, { 'content-type': 'text/plain', 'x-reply': ['a', 'b'] });
        res.end(`hello ${req.method}`);
        return;
      case '/hang':
        return; // never answers
      case '/hang-body':
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
        return; // never finishes
      case '/stream': {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const chunk = Buffer.alloc(16 * 1024, 0x61);
        const pump = () => {
          while (!res.destroyed && res.write(chunk)) {}
          if (!res.destroyed) res.once('drain', pump);
        };
        pump();
        return;
      }
      case '/declared-big':
        res.writeHead(200, { 'content-length': String(50 * 1024 * 1024) });
        res.write('x');
        return;
      case '/redirect':
        res.writeHead(Number(url.searchParams.get('status') ?? 302), {
          location: url.searchParams.get('to') ?? '/ok',
        });
        res.end('moved');
        return;
      case '/loop':
        res.writeHead(302, { location: '/loop' });
        res.end();
        return;
      default:
        res.writeHead(404);
        res.end();
    }
  });
}

const listen = (server: http.Server | tls.Server, host = '127.0.0.1'): Promise<number> =>
  new Promise((resolve) => server.listen(0, host, () => resolve((server.address() as AddressInfo).port)));

beforeAll(async () => {
  const { root } = await makeHierarchy('ECDSA-P256', 'outbound');
  const leaf = await issueLeaf(root, 'ECDSA-P256', {
    subject: 'CN=hook.test',
    subjectAltNames: [
      { type: 'dns', value: 'hook.test' },
      { type: 'ip', value: '127.0.0.1' },
    ],
  });
  rootPem = certificateToPem(root.der);
  leafDer = leaf.der;
  const cert = certificateToPem(leaf.der);
  const key = exportPkcs8Pem(leaf.key);
  httpServer = http.createServer(handler);
  httpsServer = https.createServer({ cert, key }, handler);
  httpsServer.on('secureConnection', (s: tls.TLSSocket) =>
    sniSeen.push((s as { servername?: string | false }).servername),
  );
  alpnServer = tls.createServer({ cert, key, ALPNProtocols: ['acme-tls/1'] }, (socket) => socket.end());
  otherServer = http.createServer(handler);
  [httpPort, httpsPort, alpnPort, otherPort] = await Promise.all([
    listen(httpServer),
    listen(httpsServer),
    listen(alpnServer),
    listen(otherServer, '127.0.0.2'),
  ]);
});

afterAll(async () => {
  for (const server of [httpServer, httpsServer, otherServer]) server.closeAllConnections();
  await Promise.all(
    [httpServer, httpsServer, alpnServer, otherServer].map((s) => new Promise((resolve) => s.close(resolve))),
  );
});

beforeEach(() => {
  seen.length = 0;
  sniSeen.length = 0;
});

const NAMES = staticResolver({
  'hook.test': '127.0.0.1',
  'hook2.test': '127.0.0.1',
  'other.test': '127.0.0.2',
  'meta.test': '169.254.169.254',
});

function client(options: OutboundClientOptions = {}) {
  return createOutboundClient({
    allowlist: parseAllowlist('127.0.0.1'),
    loopback: 'when-listed',
    resolve: NAMES,
    ...options,
  });
}

async function reasonOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isCertwrightError(error)) throw new Error(`expected a CertwrightError, got ${String(error)}`);
  return error.reason;
}

describe('guarded HTTP requests to local receivers', () => {
  it('delivers a POST with headers and body, Host from the URL, and reports status, headers and timing', async () => {
    const response = await client().request(`http://hook.test:${httpPort}/ok?a=1`, {
      method: 'post',
      headers: { 'content-type': 'application/json', authorization: 'Bearer t0k' },
      body: '{"text":"a \\"quote\\" and ✓"}',
    });
    expect(response.status).toBe(200);
    expect(new TextDecoder().decode(response.body)).toBe('hello POST');
    expect(response.headers['x-reply']).toBe('a, b');
    expect(response.address).toBe('127.0.0.1');
    expect(response.truncated).toBe(false);
    expect(response.timing.totalMs).toBeGreaterThanOrEqual(response.timing.firstByteMs);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/ok?a=1', body: '{"text":"a \\"quote\\" and ✓"}' });
    expect(seen[0]?.headers).toMatchObject({
      host: `hook.test:${httpPort}`,
      authorization: 'Bearer t0k',
      'user-agent': 'certwright',
      'content-length': String(Buffer.byteLength('{"text":"a \\"quote\\" and ✓"}')),
    });
  });

  it('answers HEAD without a body', async () => {
    const response = await client().request(`http://hook.test:${httpPort}/ok`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.body.byteLength).toBe(0);
  });

  it('refuses the same receiver without the loopback opt-in, before connecting', async () => {
    const plain = createOutboundClient({ resolve: NAMES, allowlist: parseAllowlist('127.0.0.1') });
    expect(await reasonOf(plain.request(`http://hook.test:${httpPort}/ok`))).toBe('address_refused');
    expect(await reasonOf(client().request(`http://other.test:${otherPort}/ok`))).toBe('address_refused');
    expect(seen).toHaveLength(0);
  });

  it('refuses userinfo tricks before any connection', async () => {
    expect(await reasonOf(client().request(`http://good@127.0.0.1:${httpPort}/ok`))).toBe('invalid_input');
    expect(await reasonOf(client().request(`http://hook.test:${httpPort}@127.0.0.1:${httpPort}/ok`))).toBe(
      'invalid_input',
    );
    expect(seen).toHaveLength(0);
  });

  it('refuses bad and reserved headers and methods before connecting', async () => {
    const c = client();
    const url = `http://hook.test:${httpPort}/ok`;
    expect(await reasonOf(c.request(url, { headers: { 'bad header': 'x' } }))).toBe('invalid_input');
    expect(await reasonOf(c.request(url, { headers: { 'x-a': 'line\r\nInjected: 1' } }))).toBe(
      'invalid_input',
    );
    expect(await reasonOf(c.request(url, { headers: { Host: 'elsewhere.test' } }))).toBe('invalid_input');
    expect(await reasonOf(c.request(url, { method: 'GET X' }))).toBe('invalid_input');
    expect(await reasonOf(c.request(url, { method: 'CONNECT' }))).toBe('invalid_input');
    expect(seen).toHaveLength(0);
  });

  it('cuts a receiver that never answers at the timeout', async () => {
    expect(await reasonOf(client().request(`http://hook.test:${httpPort}/hang`, { timeoutMs: 300 }))).toBe(
      'timed_out',
    );
    expect(
      await reasonOf(client().request(`http://hook.test:${httpPort}/hang-body`, { timeoutMs: 300 })),
    ).toBe('timed_out');
    expect(
      await reasonOf(
        client().request(`http://hook.test:${httpPort}/hang`, { timeoutMs: 5000, totalTimeoutMs: 300 }),
      ),
    ).toBe('timed_out');
  });

  it('cuts a receiver that streams forever at the cap', async () => {
    const url = `http://hook.test:${httpPort}/stream`;
    expect(await reasonOf(client().request(url, { maxResponseBytes: 64 * 1024 }))).toBe('response_too_large');
    const cut = await client().request(url, { maxResponseBytes: 100_000, onTooLarge: 'truncate' });
    expect(cut.status).toBe(200);
    expect(cut.truncated).toBe(true);
    expect(cut.body.byteLength).toBe(100_000);
  });

  it('refuses a declared length above the cap without reading it', async () => {
    expect(
      await reasonOf(
        client().request(`http://hook.test:${httpPort}/declared-big`, { maxResponseBytes: 1024 }),
      ),
    ).toBe('response_too_large');
  });

  it('reports a closed port as a connection failure', async () => {
    const closed = http.createServer();
    const port = await listen(closed);
    await new Promise((resolve) => closed.close(resolve));
    expect(await reasonOf(client().request(`http://hook.test:${port}/`))).toBe('connection_failed');
  });
});

describe('redirects', () => {
  const to = (target: string, status = 302) =>
    `http://hook.test:${httpPort}/redirect?status=${status}&to=${encodeURIComponent(target)}`;

  it('refuses redirects unless told otherwise, and returns them as they are with manual', async () => {
    expect(await reasonOf(client().request(to('/ok')))).toBe('redirect_refused');
    const manual = await client().request(to('/ok'), { redirect: 'manual' });
    expect(manual.status).toBe(302);
    expect(manual.headers.location).toBe('/ok');
    expect(seen).toHaveLength(2);
  });

  it('checks every hop: a redirect to the metadata address or to a name resolving to loopback is refused', async () => {
    const c = client();
    expect(
      await reasonOf(c.request(to('http://169.254.169.254/latest/meta-data/'), { redirect: 'follow' })),
    ).toBe('address_refused');
    expect(await reasonOf(c.request(to('http://meta.test/latest/meta-data/'), { redirect: 'follow' }))).toBe(
      'address_refused',
    );
    expect(await reasonOf(c.request(to('http://[::ffff:a9fe:a9fe]/'), { redirect: 'follow' }))).toBe(
      'address_refused',
    );
    expect(await reasonOf(c.request(to(`http://other.test:${otherPort}/ok`), { redirect: 'follow' }))).toBe(
      'address_refused',
    );
    expect(await reasonOf(c.request(to('file:///etc/passwd'), { redirect: 'follow' }))).toBe(
      'redirect_refused',
    );
    expect(await reasonOf(c.request(to('http://u:p@hook.test/'), { redirect: 'follow' }))).toBe(
      'redirect_refused',
    );
    expect(seen.map((s) => s.url.split('?')[0])).toEqual(Array(6).fill('/redirect'));
  });

  it('follows allowed hops, rewrites POST to GET on 303, and stops at the hop limit', async () => {
    const followed = await client().request(to(`http://hook2.test:${httpPort}/ok`, 303), {
      method: 'POST',
      body: 'x',
      headers: { 'content-type': 'text/plain' },
      redirect: 'follow',
    });
    expect(followed.status).toBe(200);
    expect(followed.url).toBe(`http://hook2.test:${httpPort}/ok`);
    expect(followed.redirects).toEqual([`http://hook2.test:${httpPort}/ok`]);
    expect(seen[1]).toMatchObject({ method: 'GET', body: '' });
    expect(
      await reasonOf(
        client().request(`http://hook.test:${httpPort}/loop`, { redirect: 'follow', maxRedirects: 3 }),
      ),
    ).toBe('redirect_refused');
    expect(seen.length).toBe(1 + 1 + 4);
    expect(
      await reasonOf(
        client().request(to('/ok'), { redirect: 'follow', allowRedirect: (u) => u.port === '443' }),
      ),
    ).toBe('redirect_refused');
  });

  it('keeps the method and body on 307 and drops credentials when the origin changes', async () => {
    await client().request(to(`http://hook2.test:${httpPort}/ok`, 307), {
      method: 'POST',
      body: 'payload',
      headers: { authorization: 'Bearer secret', 'x-api-key': 'k', accept: 'text/plain' },
      redirect: 'follow',
    });
    expect(seen[0]?.headers.authorization).toBe('Bearer secret');
    expect(seen[1]).toMatchObject({ method: 'POST', body: 'payload' });
    expect(seen[1]?.headers.authorization).toBeUndefined();
    expect(seen[1]?.headers['x-api-key']).toBeUndefined();
    expect(seen[1]?.headers.accept).toBe('text/plain');
  });
});

describe('DNS rebinding', () => {
  it('connects to the address it checked: a later, different answer is never asked for', async () => {
    let calls = 0;
    const flipping: Resolver = async () => (++calls === 1 ? ['127.0.0.1'] : ['127.0.0.2']);
    const response = await client({ resolve: flipping }).request(`http://rebind.test:${httpPort}/ok`);
    expect(response.status).toBe(200);
    expect(response.address).toBe('127.0.0.1');
    expect(calls).toBe(1);
    expect(seen).toHaveLength(1);
  });

  it('refuses when the one answer is refused, even if a second lookup would pass', async () => {
    let calls = 0;
    const flipping: Resolver = async () => (++calls === 1 ? ['169.254.169.254'] : ['127.0.0.1']);
    expect(await reasonOf(client({ resolve: flipping }).request(`http://rebind.test:${httpPort}/ok`))).toBe(
      'address_refused',
    );
    expect(calls).toBe(1);
    expect(seen).toHaveLength(0);
  });
});

describe('TLS', () => {
  it('sends SNI for the URL name and verifies the certificate against the given roots', async () => {
    const response = await client().request(`https://hook.test:${httpsPort}/ok`, { tls: { ca: rootPem } });
    expect(response.status).toBe(200);
    expect(sniSeen).toEqual(['hook.test']);
    expect(seen[0]?.headers.host).toBe(`hook.test:${httpsPort}`);
  });

  it('verifies an address literal against the certificate IP address and sends no SNI', async () => {
    const response = await client().request(`https://127.0.0.1:${httpsPort}/ok`, { tls: { ca: rootPem } });
    expect(response.status).toBe(200);
    expect(sniSeen).toHaveLength(1);
    expect(sniSeen[0]).toBeFalsy();
  });

  it('fails with tls_failed on an untrusted or misnamed certificate, unless verification is off', async () => {
    expect(await reasonOf(client().request(`https://hook.test:${httpsPort}/ok`))).toBe('tls_failed');
    const wrongName = client({ resolve: staticResolver({ 'wrong.test': '127.0.0.1' }) });
    expect(
      await reasonOf(wrongName.request(`https://wrong.test:${httpsPort}/ok`, { tls: { ca: rootPem } })),
    ).toBe('tls_failed');
    expect(await reasonOf(client().request(`https://hook.test:${httpPort}/ok`, { timeoutMs: 2000 }))).toBe(
      'tls_failed',
    );
    const unverified = await client().request(`https://hook.test:${httpsPort}/ok`, {
      tls: { verify: false },
    });
    expect(unverified.status).toBe(200);
  });

  it('connectTls offers ALPN and SNI and returns the peer certificate without validating it', async () => {
    const accepted = once(alpnServer, 'secureConnection');
    const result = await client().connectTls({
      host: 'hook.test',
      port: alpnPort,
      servername: 'challenge.example.test',
      alpn: ['acme-tls/1'],
      verify: false,
    });
    expect(result).toMatchObject({
      host: 'hook.test',
      address: '127.0.0.1',
      servername: 'challenge.example.test',
      alpnProtocol: 'acme-tls/1',
      protocol: 'TLSv1.3',
      authorized: false,
    });
    expect(Buffer.from(result.peerCertificates[0]!).equals(leafDer)).toBe(true);
    const [socket] = (await accepted) as [tls.TLSSocket];
    expect((socket as { servername?: string }).servername).toBe('challenge.example.test');
  });

  it('connectTls verifies by default and is guarded like every connection', async () => {
    const verified = await client().connectTls({ host: 'hook.test', port: alpnPort, ca: rootPem });
    expect(verified.authorized).toBe(true);
    expect(await reasonOf(client().connectTls({ host: 'hook.test', port: alpnPort }))).toBe('tls_failed');
    expect(await reasonOf(client().connectTls({ host: 'meta.test', port: 443 }))).toBe('address_refused');
    expect(await reasonOf(client().connectTls({ host: '0x7f.0.0.2', port: alpnPort }))).toBe(
      'address_refused',
    );
    expect(await reasonOf(client().connectTls({ host: 'hook.test', port: 0 }))).toBe('invalid_input');
  });
});

describe('dnsServerResolver', () => {
  it('asks the named DNS server for AAAA and A records and never the system resolver', async () => {
    const dns = await startDnsServer({ 'hook.test': ['127.0.0.1'], 'dual.test': ['127.0.0.1', '::1'] });
    try {
      const resolve = dnsServerResolver(dns.address, { timeoutMs: 1000, tries: 1 });
      expect(await resolve('dual.test')).toEqual(['::1', '127.0.0.1']);
      expect(dns.questions).toEqual(expect.arrayContaining(['dual.test AAAA', 'dual.test A']));
      expect(await reasonOf(resolve('missing.test'))).toBe('dns_failed');
      const response = await client({ resolve }).request(`http://hook.test:${httpPort}/ok`);
      expect(response.status).toBe(200);
    } finally {
      await dns.close();
    }
  });

  it('refuses a server that is not an IP address', () => {
    expect(() => dnsServerResolver('dns.example.test:53')).toThrow(/not a DNS server address/);
    expect(() => dnsServerResolver('127.0.0.1:99999')).toThrow(/not a DNS server address/);
    expect(() => dnsServerResolver('[::1]:5353')).not.toThrow();
  });
});
