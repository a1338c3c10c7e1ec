import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Resolver, staticResolver } from '../../src/net/resolver.js';
import { createWebhookClient } from '../../src/net/webhook-client.js';
import { sampleAlert } from '../../src/notify/webhooks/alert.js';
import type { WebhookTarget } from '../../src/notify/webhooks/request.js';
import { WebhookSender } from '../../src/notify/webhooks/sender.js';

const NOW = new Date('2026-05-01T12:00:00Z');
const alert = sampleAlert(NOW);

const target = (url: string): WebhookTarget => ({
  url,
  method: 'POST',
  service: 'generic',
  template: '',
  headers: {},
  options: {},
});

/** Hostile names and what they resolve to. */
const NAMES: Record<string, string | string[]> = {
  'loop.evil.test': '127.0.0.1',
  'loop2.evil.test': '127.1.2.3',
  'localhost.evil.test': ['127.0.0.1', '::1'],
  'meta.evil.test': '169.254.169.254',
  'ecs.evil.test': '169.254.170.2',
  'eks.evil.test': '169.254.170.23',
  'alibaba.evil.test': '100.100.100.200',
  'azure.evil.test': '168.63.129.16',
  'oracle.evil.test': '192.0.0.192',
  'ten.evil.test': '10.0.0.1',
  'ten2.evil.test': '10.255.255.254',
  'p172a.evil.test': '172.16.0.1',
  'p172b.evil.test': '172.31.255.255',
  'p192.evil.test': '192.168.1.1',
  'cgnat.evil.test': '100.64.0.1',
  'mapped.evil.test': '::ffff:127.0.0.1',
  'mapped-meta.evil.test': '::ffff:169.254.169.254',
  'mapped-ten.evil.test': '::ffff:10.0.0.1',
  'compat.evil.test': '::127.0.0.1',
  'v6loop.evil.test': '::1',
  'ula.evil.test': 'fd00::1',
  'ula2.evil.test': 'fc00::1',
  'ec2v6.evil.test': 'fd00:ec2::254',
  'll6.evil.test': 'fe80::1',
  'nat64.evil.test': '64:ff9b::7f00:1',
  'nat64-meta.evil.test': '64:ff9b::a9fe:a9fe',
  'sixtofour.evil.test': '2002:7f00:1::1',
  'teredo.evil.test': '2001:0:4136:e378:8000:63bf:80ff:fffe',
  'zero.evil.test': '0.0.0.0',
  'unspec6.evil.test': '::',
  'mcast.evil.test': '224.0.0.1',
  'mcast6.evil.test': 'ff02::1',
  'bcast.evil.test': '255.255.255.255',
  'docs.evil.test': '192.0.2.1',
  'bench.evil.test': '198.18.0.1',
  'reserved.evil.test': '240.0.0.1',
  'll.evil.test': '169.254.1.1',
  'mixed.evil.test': ['93.184.215.14', '127.0.0.1'],
  'mixed2.evil.test': ['1.1.1.1', '10.0.0.1'],
  'mixed3.evil.test': ['2606:4700::1111', '::ffff:169.254.169.254'],
};

const LITERALS = [
  'http://127.0.0.1/',
  'http://127.1/',
  'http://2130706433/',
  'http://0x7f000001/',
  'http://017700000001/',
  'http://0x7f.1/',
  'http://127.0.0.1./',
  'http://[::1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://0/',
  'http://0.0.0.0/',
  'http://169.254.169.254/latest/meta-data/',
  'http://2852039166/',
  'http://0251.0376.0251.0376/',
  'http://0xa9.0xfe.0xa9.0xfe/',
  'http://[fd00:ec2::254]/',
  'http://[64:ff9b::a9fe:a9fe]/',
  'http://10.0.0.1/',
  'http://10.1/',
  'http://192.168.0.1/',
  'http://172.16.0.1/',
  'http://100.64.0.1/',
  'http://[fc00::1]/',
  'http://[fe80::1%25eth0]/',
  'https://[::]/',
  'http://224.0.0.251/',
];

/** Never admitted, even with every private address allowlisted. */
const NEVER = new Set([
  'loop.evil.test',
  'loop2.evil.test',
  'localhost.evil.test',
  'meta.evil.test',
  'ecs.evil.test',
  'eks.evil.test',
  'alibaba.evil.test',
  'azure.evil.test',
  'oracle.evil.test',
  'mapped.evil.test',
  'mapped-meta.evil.test',
  'compat.evil.test',
  'v6loop.evil.test',
  'ec2v6.evil.test',
  'll6.evil.test',
  'nat64.evil.test',
  'nat64-meta.evil.test',
  'sixtofour.evil.test',
  'teredo.evil.test',
  'zero.evil.test',
  'unspec6.evil.test',
  'mcast.evil.test',
  'bcast.evil.test',
  'll.evil.test',
  'mixed.evil.test',
  'mixed3.evil.test',
]);

function sender(allowed: string, resolve: Resolver, loopback: 'never' | 'when-listed' = 'never') {
  return new WebhookSender({
    client: () => createWebhookClient(allowed, { resolve, loopback }),
    now: () => NOW,
    timeoutMs: 2000,
  });
}

describe('the webhook guard refuses every hostile destination (server configuration: no loopback opt-in)', () => {
  const resolve = staticResolver(NAMES);
  const hostile = [...Object.keys(NAMES).map((n) => `http://${n}/hook`), ...LITERALS];

  it('has at least 60 hostile cases', () => {
    expect(hostile.length).toBeGreaterThanOrEqual(60);
  });

  for (const url of hostile) {
    it(`refuses ${url} with an empty allowlist, as a permanent failure`, async () => {
      const result = await sender('', resolve).send(target(url), alert, 'k');
      expect(result.delivered).toBe(false);
      expect(result.status_code).toBeNull();
      expect(result.retryable).toBe(false);
      expect(result.error).toMatch(/resolves to|not allowed|never allowed|URL/);
    });
  }

  for (const name of NEVER) {
    it(`still refuses ${name} with every private range allowlisted`, async () => {
      const result = await sender('0.0.0.0/0, ::/0', resolve).send(target(`http://${name}/hook`), alert, 'k');
      expect(result.delivered).toBe(false);
      expect(result.error).toMatch(/never allowed/);
    });
  }

  it('says a private target resolves to a private IP and private networks are not allowed', async () => {
    const result = await sender('', resolve).send(target('http://ten.evil.test/hook'), alert, 'k');
    expect(result.error).toMatch(/resolves to a private IP and private networks are not allowed/);
    expect(result.error).not.toContain('10.0.0.1');
  });
});

describe('a real receiver on 127.0.0.1, reached through the test-only loopback opt-in', () => {
  let server: http.Server;
  let port: number;
  let hits = 0;
  let mode: 'ok' | 'stream' | 'redirect' | 'limited' = 'ok';

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits++;
      req.resume();
      if (mode === 'ok') {
        res.end('ok');
        return;
      }
      if (mode === 'redirect') {
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
        res.end();
        return;
      }
      if (mode === 'limited') {
        res.writeHead(429, { 'retry-after': 'Fri, 01 May 2026 12:10:00 GMT' });
        res.end('slow down');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(16 * 1024, 'a');
      const pump = () => {
        while (res.write(chunk)) {}
      };
      res.on('drain', pump);
      pump();
      req.socket.on('close', () => res.off('drain', pump));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('connects to the address it checked: a name whose second lookup differs cannot slip past', async () => {
    let lookups = 0;
    const rebinding: Resolver = async () => (++lookups === 1 ? ['127.0.0.1'] : ['169.254.169.254']);
    const s = sender('127.0.0.1', rebinding, 'when-listed');
    hits = 0;
    mode = 'ok';
    const first = await s.send(target(`http://rebind.evil.test:${port}/hook`), alert, 'k');
    expect(first).toMatchObject({ delivered: true, status_code: 200 });
    // One lookup for check and connect together: nothing re-resolved the name in between.
    expect(lookups).toBe(1);
    expect(hits).toBe(1);
    // The next delivery resolves again and is checked again: the new answer is refused.
    const second = await s.send(target(`http://rebind.evil.test:${port}/hook`), alert, 'k');
    expect(second.delivered).toBe(false);
    expect(second.error).toMatch(/cloud metadata/);
    expect(lookups).toBe(2);
    expect(hits).toBe(1);
  });

  it('refuses a name whose first answer is hostile even though a later one would be fine', async () => {
    let lookups = 0;
    const flipping: Resolver = async () =>
      ++lookups === 1 ? ['::ffff:127.0.0.1', '10.0.0.9'] : ['127.0.0.1'];
    hits = 0;
    const result = await sender('127.0.0.1', flipping, 'when-listed').send(
      target(`http://flip.evil.test:${port}/hook`),
      alert,
      'k',
    );
    expect(result.delivered).toBe(false);
    expect(lookups).toBe(1);
    expect(hits).toBe(0);
  });

  it('never reaches loopback without the opt-in, even with 127.0.0.1 allowlisted', async () => {
    hits = 0;
    const resolve = staticResolver({ 'hook.test': '127.0.0.1' });
    const result = await sender('127.0.0.1', resolve).send(
      target(`http://hook.test:${port}/hook`),
      alert,
      'k',
    );
    expect(result.delivered).toBe(false);
    expect(hits).toBe(0);
  });

  it('refuses to follow a redirect: a permanent failure that says so, and the redirect target is never reached', async () => {
    mode = 'redirect';
    hits = 0;
    const resolve = staticResolver({ 'hook.test': '127.0.0.1' });
    const result = await sender('127.0.0.1', resolve, 'when-listed').send(
      target(`http://hook.test:${port}/hook`),
      alert,
      'k',
    );
    expect(result).toMatchObject({ delivered: false, retryable: false });
    expect(result.meaning).toMatch(/redirect/);
    expect(hits).toBe(1);
    mode = 'ok';
  });

  it('retries a 429 no sooner than its Retry-After date', async () => {
    mode = 'limited';
    const resolve = staticResolver({ 'hook.test': '127.0.0.1' });
    const result = await sender('127.0.0.1', resolve, 'when-listed').send(
      target(`http://hook.test:${port}/hook`),
      alert,
      'k',
    );
    expect(result).toMatchObject({
      delivered: false,
      status_code: 429,
      retryable: true,
      retry_after_ms: 600_000,
    });
    expect(result.response_excerpt).toBe('slow down');
    mode = 'ok';
  });

  it('cuts a receiver that streams forever at the response cap', async () => {
    mode = 'stream';
    const resolve = staticResolver({ 'hook.test': '127.0.0.1' });
    const result = await new WebhookSender({
      client: () => createWebhookClient('127.0.0.1', { resolve, loopback: 'when-listed' }),
      now: () => NOW,
      timeoutMs: 5000,
      maxResponseBytes: 64 * 1024,
    }).send(target(`http://hook.test:${port}/hook`), alert, 'k');
    expect(result).toMatchObject({ delivered: true, status_code: 200 });
    expect(result.response_excerpt.length).toBeLessThanOrEqual(512);
    mode = 'ok';
  });
});
