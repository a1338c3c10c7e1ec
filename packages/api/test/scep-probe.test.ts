import { ManualClock, ScepProbeService, SYSTEM_ACTOR } from '@certwright/core';
import { createOutboundClient, parseAllowlist, staticResolver } from '@certwright/core/net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CAPS,
  type ScepFixtures,
  type ScepTestServer,
  scepFixtures,
  startScepTestServer,
} from './support/scep-server.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * POST /api/v1/network-scan/scep-probe and GET …/scep-probes against SCEP-ish servers on
 * 127.0.0.1. `rig` reaches loopback through the test-only allowance of the address guard (a
 * client made with the loopback opt-in and a loopback allowlist entry, which no setting of the
 * server can build); `guarded` is the probe exactly as the server builds it.
 */

const START = '2026-01-01T00:00:00Z';
let fixtures: ScepFixtures;
let plain: ScepTestServer;
let tls: ScepTestServer;
let rig: TestApp;
let guarded: TestApp;
let rigClock: ManualClock;

const loopbackClient = () =>
  createOutboundClient({
    loopback: 'when-listed',
    allowlist: parseAllowlist('127.0.0.1'),
    resolve: staticResolver({ 'scep.test': '127.0.0.1' }),
  });

beforeAll(async () => {
  fixtures = await scepFixtures();
  plain = await startScepTestServer(fixtures);
  tls = await startScepTestServer(fixtures, { tls: true });
  rigClock = new ManualClock(START);
  rig = await createTestApp({
    clock: rigClock,
    services: { scepProbe: { client: loopbackClient(), tls: { ca: fixtures.tlsCertPem } } },
  });
  guarded = await createTestApp();
}, 180_000);

afterAll(async () => {
  await Promise.all([plain?.close(), tls?.close(), rig?.close(), guarded?.close()]);
});

/** A probe through the API; the app's clock then moves on a second, so history has an order. */
async function probe(app: TestApp, url: string) {
  const res = await app.call('POST', '/api/v1/network-scan/scep-probe', { url });
  (app.clock as ManualClock).advance(1000);
  return res;
}

/** Every request a server saw since `from`: only the two GET operations, never a PKIOperation. */
function expectOnlyCapsAndCert(server: ScepTestServer, from: number) {
  const seen = server.requests.slice(from);
  expect(seen.length).toBeGreaterThan(0);
  for (const r of seen) {
    expect(r.method).toBe('GET');
    expect(['GetCACaps', 'GetCACert']).toContain(r.operation);
  }
}

describe('SCEP probe of a reachable server', () => {
  it('records every field for a CA + RA chain in PKCS#7 over https, choosing the CA by basicConstraints', async () => {
    const from = tls.requests.length;
    const res = await probe(
      rig,
      `${tls.origin.replace('127.0.0.1', 'scep.test')}/pkcs7/cgi-bin/pkiclient.exe`,
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^scepp-/),
      url: `${tls.origin.replace('127.0.0.1', 'scep.test')}/pkcs7/cgi-bin/pkiclient.exe`,
      reachable: true,
      capabilities: CAPS.trim().split('\n'),
      supports_rfc8894: true,
      supports_aes: true,
      supports_post: true,
      supports_renewal: true,
      supports_sha256: true,
      supports_sha512: true,
      ca_subject: 'CN=Probe Test CA,O=certwright tests',
      ca_issuer: 'CN=Probe Test CA,O=certwright tests',
      ca_not_before: '2025-01-01T00:00:00.000Z',
      ca_not_after: '2027-01-01T00:00:00.000Z',
      days_to_expiry: 365,
      key_algorithm: 'ECDSA P-256',
      chain_length: 2,
      expired: false,
      probed_at: '2026-01-01T00:00:00.000Z',
      duration_ms: 0,
      error: null,
    });
    expect(tls.requests.slice(from).map((r) => r.operation)).toEqual(['GetCACaps', 'GetCACert']);
    expectOnlyCapsAndCert(tls, from);
  });

  it.each([
    ['raw DER', 'der', 1],
    ['PEM-wrapped DER', 'pem', 1],
    ['PKCS#7 in a PEM block', 'pem-pkcs7', 2],
  ])('reads the CA certificate sent as %s', async (_what, variant, chain) => {
    const res = await probe(rig, `${plain.origin}/${variant}/scep`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      reachable: true,
      ca_subject: 'CN=Probe Test CA,O=certwright tests',
      key_algorithm: 'ECDSA P-256',
      chain_length: chain,
      error: null,
    });
  });

  it('takes a lone certificate without basicConstraints as the CA and describes its RSA key', async () => {
    const res = await probe(rig, `${plain.origin}/v1/scep`);
    expect(res.body).toMatchObject({ ca_subject: 'CN=Old Style CA', key_algorithm: 'RSA 2048', error: null });
  });

  it('goes on to GetCACert when GetCACaps fails, and reports the failure', async () => {
    const res = await probe(rig, `${plain.origin}/no-caps/scep`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      reachable: true,
      capabilities: [],
      supports_rfc8894: false,
      supports_aes: false,
      ca_subject: 'CN=Probe Test CA,O=certwright tests',
      error: 'GetCACaps: HTTP 404',
    });
  });

  it('stores control characters of a CA name escaped, so every engine can hold them and no log line breaks', async () => {
    const res = await probe(rig, `${plain.origin}/nul/scep`);
    expect(res.status).toBe(200);
    expect(res.body.ca_subject).toBe('CN=\\x00robe\\x0aTest CA,O=certwright tests');
    expect(res.body.ca_issuer).toBe(res.body.ca_subject);
    const list = await rig.call('GET', '/api/v1/network-scan/scep-probes?limit=1');
    expect(list.body.data[0].ca_subject).toBe(res.body.ca_subject);
  });

  it('reports a body that is no certificate in error, still 200 and stored', async () => {
    const res = await probe(rig, `${plain.origin}/garbage/scep`);
    expect(res.status).toBe(200);
    expect(res.body.reachable).toBe(true);
    expect(res.body.ca_subject).toBeNull();
    expect(res.body.chain_length).toBe(0);
    expect(res.body.error).toMatch(/^GetCACert: /);
    const list = await rig.call('GET', '/api/v1/network-scan/scep-probes?limit=1');
    expect(list.body.data[0].id).toBe(res.body.id);
  });

  it.each([
    ['above 1 MiB', 'huge'],
    ['that never ends', 'endless'],
  ])('stops reading a GetCACert answer %s and reports it', async (_what, variant) => {
    const res = await probe(rig, `${plain.origin}/${variant}/scep`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ reachable: true, ca_subject: null, chain_length: 0 });
    expect(res.body.error).toMatch(/^GetCACert: .*(large|limit|bytes)/i);
  });

  it('gives up when the server does not answer in time (shortened timeout), and records it', async () => {
    const quick = new ScepProbeService(rig.services.deps, { client: loopbackClient(), timeoutMs: 300 });
    const from = plain.requests.length;
    const result = await quick.probe(SYSTEM_ACTOR, { url: `${plain.origin}/slow/scep` });
    rigClock.advance(1000);
    expect(result).toMatchObject({ reachable: false, ca_subject: null });
    expect(result.error).toMatch(/time|within/i);
    // The deadline covers the whole probe: GetCACert is not tried after GetCACaps timed out.
    expect(plain.requests.slice(from).map((r) => r.operation)).toEqual(['GetCACaps']);
    const stored = await rig.services.scepProbes.recent({ limit: 200 });
    expect(stored.some((p) => p.id === result.id)).toBe(true);
  });

  it('refuses a probe beyond the concurrency cap with 429 instead of queueing it', async () => {
    const app = await createTestApp({
      services: { scepProbe: { client: loopbackClient(), maxConcurrent: 1 } },
    });
    try {
      const from = plain.requests.length;
      const first = app.call('POST', '/api/v1/network-scan/scep-probe', { url: `${plain.origin}/slow/one` });
      // Wait until the first probe holds its slot: its GetCACaps has reached the server.
      while (plain.requests.length === from) await new Promise((resolve) => setTimeout(resolve, 10));
      const second = await app.call('POST', '/api/v1/network-scan/scep-probe', {
        url: `${plain.origin}/der/two`,
      });
      expect(second.status).toBe(429);
      expect(second.body.detail ?? JSON.stringify(second.body)).toMatch(/already running/);
      plain.release();
      const done = await first;
      expect(done.status).toBe(200);
      expect(done.body.reachable).toBe(false);
      // The slot is free again.
      const third = await app.call('POST', '/api/v1/network-scan/scep-probe', {
        url: `${plain.origin}/der/three`,
      });
      expect(third.status).toBe(200);
      expect(third.body.error).toBeNull();
      expect((await app.services.scepProbes.recent({ limit: 200 })).map((p) => p.url)).not.toContain(
        `${plain.origin}/der/two`,
      );
    } finally {
      await app.close();
    }
  });

  it('refuses an https server whose certificate it does not trust, in error', async () => {
    const res = await probe(guarded, `${tls.origin}/der/scep`);
    expect(res.status).toBe(200);
    expect(res.body.error).not.toBeNull();
    const untrusting = new ScepProbeService(rig.services.deps, { client: loopbackClient() });
    const result = await untrusting.probe(SYSTEM_ACTOR, { url: `${tls.origin}/der/scep` });
    rigClock.advance(1000);
    expect(result).toMatchObject({ reachable: false, ca_subject: null });
    expect(result.error).toMatch(/TLS|certificate/i);
  });
});

describe('SCEP probe refusals by the address guard', () => {
  it.each([
    ['the cloud metadata address', 'http://169.254.169.254/', /cloud metadata/],
    ['loopback', 'http://127.0.0.1:9/scep', /loopback/],
    ['loopback by name', 'http://localhost:9/scep', /loopback/],
    ['IPv6 loopback', 'http://[::1]:9/scep', /loopback/],
    ['link-local', 'http://169.254.10.1/scep', /link-local/],
    ['reserved space', 'http://240.0.0.1/scep', /reserved/],
    ['an IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/scep', /loopback/],
  ])('captures a refusal of %s in error: 200, stored, nothing sent', async (_what, url, message) => {
    const res = await probe(guarded, url);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      reachable: false,
      capabilities: [],
      ca_subject: null,
      chain_length: 0,
      days_to_expiry: null,
      expired: null,
    });
    expect(res.body.error).toMatch(message);
    expect(res.body.error).not.toMatch(/GetCACaps|GetCACert/);
    const list = await guarded.call('GET', '/api/v1/network-scan/scep-probes?limit=1');
    expect(list.body.data[0]).toEqual(res.body);
  });

  it('refuses the real loopback server as the server builds the probe, without a single request', async () => {
    const from = plain.requests.length;
    const res = await probe(guarded, `${plain.origin}/der/scep`);
    expect(res.body.error).toMatch(/loopback/);
    expect(plain.requests.length).toBe(from);
  });

  it('refuses private networks unless allowed, and never loopback through the allowed ranges', async () => {
    const res = await probe(guarded, 'http://10.1.2.3/scep');
    expect(res.status).toBe(200);
    expect(res.body.error).toMatch(/private IP and private networks are not allowed/);
    // allowedRanges builds a client without the loopback opt-in: a loopback entry admits nothing.
    const listed = new ScepProbeService(guarded.services.deps, { allowedRanges: '127.0.0.0/8' });
    const from = plain.requests.length;
    const result = await listed.probe(SYSTEM_ACTOR, { url: `${plain.origin}/der/scep` });
    (guarded.clock as ManualClock).advance(1000);
    expect(result.error).toMatch(/loopback/);
    expect(plain.requests.length).toBe(from);
  });

  it('keeps the metadata address refused even with the test-only loopback allowance', async () => {
    const res = await probe(rig, 'http://169.254.169.254/latest/meta-data/');
    expect(res.status).toBe(200);
    expect(res.body.error).toMatch(/cloud metadata/);
    const other = await probe(rig, 'http://127.0.0.2:9/scep');
    expect(other.body.error).toMatch(/loopback/);
  });
});

describe('SCEP probe input', () => {
  it.each([
    [{ url: 'ftp://scep.example.com/scep' }, /scheme 'ftp' is not allowed/],
    [{ url: 'file:///etc/passwd' }, /scheme 'file' is not allowed/],
    [{ url: 'not a url' }, /not a valid absolute URL/],
    [{ url: 'https://user:pw@scep.example.com/' }, /credentials/],
    [{ url: '' }, /url/],
    [{}, /url: is required/],
    [{ url: `https://scep.example.com/${'a'.repeat(2100)}` }, /url/],
    [{ url: 'https://scep.example.com/', extra: 1 }, /extra/],
  ])('refuses %j with 400 naming the field, storing nothing', async (body, message) => {
    const before = (await guarded.services.scepProbes.recent({ limit: 1 }))[0]?.id;
    const res = await guarded.call('POST', '/api/v1/network-scan/scep-probe', body);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toMatch(message);
    expect(JSON.stringify(res.body)).not.toMatch(/at .*\.ts|stack/);
    expect((await guarded.services.scepProbes.recent({ limit: 1 }))[0]?.id).toBe(before);
  });

  it('refuses a caller without credentials with 401', async () => {
    const res = await guarded.call(
      'POST',
      '/api/v1/network-scan/scep-probe',
      { url: 'https://a.example/' },
      { token: null },
    );
    expect(res.status).toBe(401);
    expect(
      (await guarded.call('GET', '/api/v1/network-scan/scep-probes', undefined, { token: null })).status,
    ).toBe(401);
  });
});

describe('SCEP probe history', () => {
  it('lists newest first, clamps the limit to 1–200 and refuses a limit that is no integer', async () => {
    const a = await probe(guarded, 'http://169.254.169.254/a');
    const b = await probe(guarded, 'http://169.254.169.254/b');
    const list = await guarded.call('GET', '/api/v1/network-scan/scep-probes?limit=2');
    expect(list.status).toBe(200);
    expect(list.body.limit).toBe(2);
    expect(list.body.data.map((p: { id: string }) => p.id)).toEqual([b.body.id, a.body.id]);

    const zero = await guarded.call('GET', '/api/v1/network-scan/scep-probes?limit=0');
    expect(zero.body.limit).toBe(1);
    expect(zero.body.data).toHaveLength(1);
    const many = await guarded.call('GET', '/api/v1/network-scan/scep-probes?limit=100000');
    expect(many.body.limit).toBe(200);
    const fallback = await guarded.call('GET', '/api/v1/network-scan/scep-probes');
    expect(fallback.body.limit).toBe(20);
    const bad = await guarded.call('GET', '/api/v1/network-scan/scep-probes?limit=ten');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/limit/);
  });

  it('recomputes days to expiry and the expired flag at the time of the query', async () => {
    rigClock.set(START);
    const res = await probe(rig, `${plain.origin}/der/scep`);
    expect(res.body).toMatchObject({ days_to_expiry: 365, expired: false });
    const find = async () =>
      (await rig.call('GET', '/api/v1/network-scan/scep-probes?limit=200')).body.data.find(
        (p: { id: string }) => p.id === res.body.id,
      );
    rigClock.set('2026-04-11T00:00:00Z'); // 100 days later
    expect(await find()).toMatchObject({
      days_to_expiry: 265,
      expired: false,
      probed_at: res.body.probed_at,
    });
    rigClock.set('2027-01-03T00:00:00Z');
    expect(await find()).toMatchObject({ days_to_expiry: -2, expired: true });
    rigClock.set(START);
  });
});
