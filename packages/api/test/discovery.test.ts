import type { KeyObject } from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';
import { fingerprintOf, ManualClock } from '@certwright/core';
import { createAdministratorClient } from '@certwright/core/net';
import {
  certificateToPem,
  createSelfSignedCertificate,
  exportPkcs8Pem,
  generateKeyPair,
  type IssuingAuthority,
  issueCertificate,
  prepareIssuer,
} from '@certwright/core/pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Discovery and endpoint health against real TLS servers on 127.0.0.1. Loopback is reachable
 * only because the services here are built with the test-only opt-in (`policy.allowLoopback`);
 * a production configuration cannot express it.
 */

const DAY = 86_400_000;
const now = new Date();
let app: TestApp;
let clock: ManualClock;
let authority: IssuingAuthority;

interface Leaf {
  cert: string;
  key: string;
  der: Buffer;
  fingerprint: string;
}

async function leaf(cn: string, notBefore: Date, notAfter: Date): Promise<Leaf> {
  const keys = await generateKeyPair('ECDSA-P256');
  const issued = issueCertificate(
    {
      subject: `CN=${cn}`,
      publicKey: keys.publicKey,
      notBefore,
      notAfter,
      subjectAltNames: [{ type: 'dns', value: cn }],
      extendedKeyUsage: ['serverAuth'],
    },
    authority,
  );
  return pair(issued.der, keys.privateKey);
}

function pair(der: Buffer, key: KeyObject): Leaf {
  return { cert: certificateToPem(der), key: exportPkcs8Pem(key), der, fingerprint: fingerprintOf(der) };
}

type Mode = 'tls' | 'close' | 'hang' | 'garbage';

/** One loopback port whose behaviour a test switches: a TLS server, a reset, a hang, garbage. */
class Endpoint {
  mode: Mode = 'tls';
  port = 0;
  readonly #tls: tls.Server;
  readonly #net: net.Server;
  readonly #sockets = new Set<net.Socket>();

  constructor(served: Leaf, mode: Mode = 'tls') {
    this.mode = mode;
    this.#tls = tls.createServer({ cert: served.cert, key: served.key });
    this.#tls.on('tlsClientError', () => {});
    this.#tls.on('secureConnection', (s) => s.end());
    this.#net = net.createServer((socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
      socket.on('error', () => {});
      if (this.mode === 'close') socket.destroy();
      else if (this.mode === 'garbage') socket.end(Buffer.alloc(4096, 0x41));
      else if (this.mode === 'tls') this.#tls.emit('connection', socket);
      // 'hang': accept and never answer
    });
  }

  serve(served: Leaf): void {
    this.#tls.setSecureContext({ cert: served.cert, key: served.key });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#net.listen(0, '127.0.0.1', resolve));
    this.port = (this.#net.address() as net.AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#net.close(() => resolve()));
  }
}

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let live: Leaf;
let live2: Leaf;
let expired: Leaf;
let selfSigned: Leaf;
const endpoints: Record<string, Endpoint> = {};
let closed = 0;

async function waitForScan(id: string) {
  for (;;) {
    const scan = await app.call('GET', `/api/v1/discovery/scans/${id}`);
    if (scan.body.status !== 'running') return scan.body;
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  clock = new ManualClock(now);
  const client = createAdministratorClient({ loopbackForTests: true });
  const policy = { allowLoopback: true };
  app = await createTestApp({
    clock,
    services: {
      discovery: { client, policy, timeoutMs: 1500, concurrency: 8 },
      healthChecks: { client, policy, timeoutMs: 1500 },
    },
  });
  const caKeys = await generateKeyPair('ECDSA-P256');
  const ca = createSelfSignedCertificate(
    {
      subject: 'CN=discovery test CA',
      notBefore: new Date(now.getTime() - DAY),
      notAfter: new Date(now.getTime() + 3650 * DAY),
      basicConstraints: { ca: true },
    },
    caKeys.privateKey,
  );
  authority = prepareIssuer(ca.der, caKeys.privateKey);
  live = await leaf('live.discovery.test', new Date(now.getTime() - DAY), new Date(now.getTime() + 20 * DAY));
  live2 = await leaf(
    'live.discovery.test',
    new Date(now.getTime() - DAY),
    new Date(now.getTime() + 90 * DAY),
  );
  expired = await leaf(
    'old.discovery.test',
    new Date(now.getTime() - 100 * DAY),
    new Date(now.getTime() - DAY),
  );
  const selfKeys = await generateKeyPair('ECDSA-P256');
  const self = createSelfSignedCertificate(
    {
      subject: 'CN=self.discovery.test',
      notBefore: new Date(now.getTime() - DAY),
      notAfter: new Date(now.getTime() + 200 * DAY),
    },
    selfKeys.privateKey,
  );
  selfSigned = pair(self.der, selfKeys.privateKey);
  endpoints.live = await new Endpoint(live).start();
  endpoints.expired = await new Endpoint(expired).start();
  endpoints.self = await new Endpoint(selfSigned).start();
  endpoints.hang = await new Endpoint(live, 'hang').start();
  endpoints.close = await new Endpoint(live, 'close').start();
  endpoints.garbage = await new Endpoint(live, 'garbage').start();
  endpoints.switch = await new Endpoint(live).start();
  closed = await closedPort();
});

afterAll(async () => {
  for (const e of Object.values(endpoints)) await e.stop();
  await app?.close();
});

describe('scan targets: bad input', () => {
  const bad = async (body: unknown) => app.call('POST', '/api/v1/network-scan/targets', body);

  it('refuses a /8, malformed CIDRs, ports out of range, metadata and link-local ranges, naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ name: 'a', cidrs: ['10.0.0.0/8'], ports: [443] }, 'cidrs.0'],
      [{ name: 'a', cidrs: ['10.0.0.300/32'], ports: [443] }, 'cidrs.0'],
      [{ name: 'a', cidrs: ['10.0.0.0/33'], ports: [443] }, 'cidrs.0'],
      [{ name: 'a', cidrs: ['nonsense'], ports: [443] }, 'cidrs.0'],
      [{ name: 'a', cidrs: ['10.0.0.0/24'], ports: [70000] }, 'ports.0'],
      [{ name: 'a', cidrs: ['10.0.0.0/24'], ports: [0] }, 'ports.0'],
      [{ name: 'a', cidrs: ['10.0.0.0/24'], ports: [] }, 'ports'],
      [{ name: 'a', cidrs: ['169.254.169.254'], ports: [80] }, 'cidrs.0'],
      [{ name: 'a', cidrs: ['169.254.0.0/24'], ports: [80] }, 'cidrs.0'],
      [{ name: 'a', ports: [443] }, 'cidrs'],
      [{ name: 'a', cidrs: ['10.0.0.0/19'], ports: [443] }, 'cidrs.0'],
    ];
    for (const [body, field] of cases) {
      const res = await bad(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    expect((await app.call('GET', '/api/v1/network-scan/targets')).body.total).toBe(0);
  });

  it('caps the sum of several ranges', async () => {
    const res = await bad({ name: 'a', cidrs: ['10.0.0.0/20', '10.1.0.0/20'], ports: [443] });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe('cidrs');
  });
});

describe('network scan of a loopback target', () => {
  let targetId = '';
  let firstScan: { id: string };

  it('finds the live, expired and self-signed certificates and records hangs and garbage as errors', async () => {
    const ports = ['live', 'expired', 'self', 'hang', 'close', 'garbage'].map((k) => endpoints[k]!.port);
    const created = await app.call('POST', '/api/v1/network-scan/targets', {
      name: 'loopback',
      cidrs: ['127.0.0.1/32'],
      ports: [...ports, closed],
    });
    expect(created.status).toBe(201);
    targetId = created.body.id;
    expect(created.body.cidrs).toEqual(['127.0.0.1']);

    const started = await app.call('POST', `/api/v1/network-scan/targets/${targetId}/scan`);
    expect(started.status).toBe(202);
    expect(started.body.status).toBe('running');
    expect(started.headers.get('location')).toBe(`/api/v1/discovery/scans/${started.body.id}`);
    const scan = await waitForScan(started.body.id);
    firstScan = scan;
    expect(scan.status).toBe('completed');
    expect(scan.endpoints_total).toBe(7);
    expect(scan.endpoints_tls).toBe(3);
    expect(scan.certificates_found).toBe(3);
    expect(scan.certificates_new).toBe(3);
    const reasons = Object.fromEntries(
      scan.errors.map((e: { port: number; reason: string }) => [e.port, e.reason]),
    );
    expect(reasons[endpoints.hang!.port]).toBe('timed_out');
    expect(reasons[endpoints.close!.port]).toBe('tls_failed');
    expect(reasons[endpoints.garbage!.port]).toBe('tls_failed');
    // A closed port is the normal answer of a range: counted in endpoints_total, not an error.
    expect(reasons[closed]).toBeUndefined();

    const list = await app.call('GET', '/api/v1/discovery/certificates');
    expect(list.body.total).toBe(3);
    const byFp = Object.fromEntries(
      list.body.data.map((c: { fingerprint_sha256: string }) => [c.fingerprint_sha256, c]),
    );
    const found = byFp[live.fingerprint];
    expect(found.subject).toBe('CN=live.discovery.test');
    expect(found.issuer).toBe('CN=discovery test CA');
    expect(found.sans).toEqual(['live.discovery.test']);
    expect(found.key_algorithm).toBe('ECDSA');
    expect(found.key_size).toBe(256);
    expect(found.signature_algorithm).toBe('ecdsaWithSHA256');
    expect(found.self_signed).toBe(false);
    expect(found.status).toBe('unmanaged');
    expect(found.sightings).toEqual([
      expect.objectContaining({
        source: 'server-scanner',
        address: '127.0.0.1',
        port: endpoints.live!.port,
        sni: null,
      }),
    ]);
    expect(byFp[selfSigned.fingerprint].self_signed).toBe(true);
    expect(byFp[expired.fingerprint]).toBeDefined();
  });

  it('deduplicates by fingerprint across scans', async () => {
    clock.advance(1000);
    const again = await app.call('POST', `/api/v1/network-scan/targets/${targetId}/scan`);
    const scan = await waitForScan(again.body.id);
    expect(scan.certificates_found).toBe(3);
    expect(scan.certificates_new).toBe(0);
    expect((await app.call('GET', '/api/v1/discovery/certificates')).body.total).toBe(3);
    const scans = await app.call('GET', `/api/v1/discovery/scans?target_id=${targetId}`);
    expect(scans.body.data.map((s: { id: string }) => s.id)).toEqual([again.body.id, firstScan.id]);
  });

  it('filters by expiry window, issuer, managed state and where seen', async () => {
    const q = async (query: string) =>
      (await app.call('GET', `/api/v1/discovery/certificates?${query}`)).body.data.map(
        (c: { fingerprint_sha256: string }) => c.fingerprint_sha256,
      );
    expect(await q('expires_within_days=30')).toEqual([expired.fingerprint, live.fingerprint]);
    expect(await q('issuer=discovery%20test%20ca')).toHaveLength(2);
    expect(await q(`seen_port=${endpoints.self!.port}`)).toEqual([selfSigned.fingerprint]);
    expect(await q('managed=true')).toEqual([]);
    expect(await q('managed=false')).toHaveLength(3);
    expect((await app.call('GET', '/api/v1/discovery/certificates?seen_port=0')).status).toBe(400);
  });

  it('summarises, claims one into the inventory and dismisses another', async () => {
    const summary = await app.call('GET', '/api/v1/discovery/summary');
    expect(summary.body).toMatchObject({
      total: 3,
      unmanaged: 3,
      expired: 1,
      expiring: { days_7: 0, days_30: 1, days_90: 1 },
    });
    expect(summary.body.by_issuer[0]).toEqual({ issuer: 'CN=discovery test CA', count: 2 });

    const found = (await app.call('GET', '/api/v1/discovery/certificates?search=live')).body.data[0];
    const missing = await app.call('POST', `/api/v1/discovery/certificates/${found.id}/claim`, {
      issuer_id: 'iss-nope',
      owner_id: 'own-default',
      team_id: 'team-default',
    });
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0].field).toBe('issuer_id');

    const claimed = await app.call('POST', `/api/v1/discovery/certificates/${found.id}/claim`, {
      issuer_id: 'iss-local',
      owner_id: 'own-default',
      team_id: 'team-default',
    });
    expect(claimed.status).toBe(200);
    expect(claimed.body.status).toBe('managed');
    const managed = await app.call('GET', `/api/v1/certificates/${claimed.body.certificate_id}`);
    expect(managed.status).toBe(200);
    expect(managed.body.common_name).toBe('live.discovery.test');
    const versions = await app.call('GET', `/api/v1/certificates/${claimed.body.certificate_id}/versions`);
    expect(versions.body.data[0].fingerprint_sha256).toBe(live.fingerprint);

    const self = (await app.call('GET', '/api/v1/discovery/certificates?search=self')).body.data[0];
    const dismissed = await app.call('POST', `/api/v1/discovery/certificates/${self.id}/dismiss`);
    expect(dismissed.body.status).toBe('dismissed');
    expect((await app.call('POST', `/api/v1/discovery/certificates/${found.id}/dismiss`)).status).toBe(409);

    // Later sightings keep both states; the managed one stays linked.
    await waitForScan((await app.call('POST', `/api/v1/network-scan/targets/${targetId}/scan`)).body.id);
    const after = await app.call('GET', '/api/v1/discovery/summary');
    expect(after.body.by_status).toEqual({ unmanaged: 1, managed: 1, dismissed: 1 });
  });
});

describe('endpoint health', () => {
  const notifications = async () =>
    (await app.services.notifications.list({ type: 'EndpointHealth', channel: 'email', per_page: 500 }))
      .total;
  const check = (id: string) => {
    clock.advance(1000); // results ordered by time
    return app.services.healthChecks.runCheck(id);
  };

  it('refuses bad input and loopback-free hosts it may never reach', async () => {
    const cases: [unknown, string][] = [
      [{ name: 'x', host: '127.0.0.1', port: 0, expected_fingerprint: live.fingerprint }, 'port'],
      [{ name: 'x', host: '127.0.0.1', port: 443, expected_fingerprint: 'abc' }, 'expected_fingerprint'],
      [{ name: 'x', host: '127.0.0.1', port: 443 }, 'expected_fingerprint'],
      [{ name: 'x', host: '169.254.169.254', port: 443, expected_fingerprint: live.fingerprint }, 'host'],
      [{ name: 'x', host: '127.0.0.1', port: 443, certificate_id: 'mc-nope' }, 'certificate_id'],
    ];
    for (const [body, field] of cases) {
      const res = await app.call('POST', '/api/v1/health-checks', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
  });

  it('checks a new endpoint once: a scheduler tick during its first check leaves it alone', async () => {
    const ep = endpoints.switch!;
    ep.mode = 'hang'; // the first check waits for its timeout
    const creating = app.call('POST', '/api/v1/health-checks', {
      name: 'slow',
      host: '127.0.0.1',
      port: ep.port,
      expected_fingerprint: live.fingerprint,
    });
    const storage = app.services.deps.storage;
    while ((await storage.healthChecks.list({ search: 'slow' })).total === 0) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect((await app.services.healthChecks.tick()).checked).toBe(0);
    const created = await creating;
    expect(created.body).toMatchObject({ status: 'healthy', consecutive_failures: 1 });
    const history = await app.call('GET', `/api/v1/health-checks/${created.body.id}/history`);
    expect(history.body.total).toBe(1);
    expect((await app.call('DELETE', `/api/v1/health-checks/${created.body.id}`)).status).toBe(204);
    ep.mode = 'tls';
  });

  it('walks healthy → degraded → down → recovered, alerting once per transition', async () => {
    const ep = endpoints.switch!;
    ep.mode = 'tls';
    ep.serve(live);
    // A webhook taking EndpointHealth alerts: each transition reaches it as its own event.
    const hook = await app.services.deps.storage.webhooks.create({
      name: 'endpoint alerts',
      url: 'https://hooks.example.test/endpoint',
      events: ['EndpointHealth'],
    });
    const hookEvents = async () =>
      (await app.services.notifications.list({ type: 'EndpointHealth', channel: `webhook:${hook.id}` }))
        .total;
    const before = await notifications();
    const created = await app.call('POST', '/api/v1/health-checks', {
      name: 'switch',
      host: '127.0.0.1',
      port: ep.port,
      // colons and upper case are accepted, stored canonical
      expected_fingerprint: live.fingerprint.toUpperCase().replace(/(..)(?!$)/g, '$1:'),
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    // The first check ran at once.
    expect(created.body).toMatchObject({
      status: 'healthy',
      expected_fingerprint: live.fingerprint,
      tls_version: 'TLSv1.3',
      consecutive_failures: 0,
    });
    expect(created.body.observed.fingerprint_sha256).toBe(live.fingerprint);
    expect(created.body.cipher).toMatch(/^TLS_/);
    expect(created.body.last_checked_at).not.toBeNull();

    ep.mode = 'close';
    const statuses: string[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await check(id)).status);
    expect(statuses).toEqual(['healthy', 'degraded', 'degraded', 'degraded', 'down']);
    ep.mode = 'hang';
    expect((await check(id)).status).toBe('down');

    const acked = await app.call('POST', `/api/v1/health-checks/${id}/acknowledge`);
    expect(acked.body.acknowledged_at).not.toBeNull();
    expect((await app.call('GET', '/api/v1/health-checks/summary')).body).toMatchObject({
      by_status: { down: 1 },
      unacknowledged: 0,
    });

    ep.mode = 'tls';
    const recovered = await check(id);
    expect(recovered.status).toBe('healthy');
    expect(recovered.consecutive_failures).toBe(0);
    expect(recovered.acknowledged_at).toBeNull();
    expect(await hookEvents()).toBe(3);

    ep.serve(live2);
    const mismatch = await check(id);
    expect(mismatch.status).toBe('cert_mismatch');
    expect(mismatch.last_error).toContain(live2.fingerprint);
    expect((await check(id)).status).toBe('cert_mismatch');
    expect(await hookEvents()).toBe(4);
    // No certificate, no owner: no email event with nobody to send it to.
    expect(await notifications()).toBe(before);

    const history = await app.call('GET', `/api/v1/health-checks/${id}/history?per_page=3`);
    expect(history.body.total).toBe(10);
    expect(history.body.data.map((r: { status: string }) => r.status)).toEqual([
      'cert_mismatch',
      'cert_mismatch',
      'healthy',
    ]);
    expect(history.body.data[2].success).toBe(true);
    ep.serve(live);
  });

  it('flags a renewal that was not deployed once the deployment window has passed', async () => {
    const ep = endpoints.switch!;
    ep.mode = 'tls';
    ep.serve(live);
    const claimed = (await app.call('GET', '/api/v1/discovery/certificates?managed=true')).body.data[0];
    const created = await app.call('POST', '/api/v1/health-checks', {
      name: 'managed',
      host: '127.0.0.1',
      port: ep.port,
      certificate_id: claimed.certificate_id,
      deployment_window_seconds: 3600,
    });
    expect(created.body.status).toBe('healthy');
    expect(created.body.expected_fingerprint).toBe(live.fingerprint);
    const id = created.body.id;

    // A renewal: the managed certificate gets a new current version the endpoint does not serve.
    const storage = app.services.deps.storage;
    const current = (await storage.versions.latest(claimed.certificate_id))!;
    await storage.versions.create({
      ...current,
      id: undefined,
      created_at: clock.now(),
      serial_number: 'abcdef01',
      fingerprint_sha256: live2.fingerprint,
      cert_pem: live2.cert,
      private_key_pem: null,
    } as never);

    const inWindow = await check(id);
    expect(inWindow.status).toBe('healthy');
    expect(inWindow.expected_fingerprint).toBe(live2.fingerprint);

    clock.advance(2 * 3600_000);
    const stale = await check(id);
    expect(stale.status).toBe('cert_mismatch');
    expect(stale.last_error).toContain('stale deployment');

    ep.serve(live2); // deployed at last
    expect((await check(id)).status).toBe('healthy');
  });

  it('the scheduler tick checks what is due and nothing else', async () => {
    const listed = await app.call('GET', '/api/v1/health-checks');
    expect(listed.body.total).toBe(2);
    await app.services.healthChecks.tick(); // whatever the clock moves above made due
    expect((await app.services.healthChecks.tick()).checked).toBe(0);
    clock.advance(301_000);
    const report = await app.services.healthChecks.tick();
    expect(report.checked).toBe(2);
    expect(report.errors).toBe(0);
  });

  it('updates and deletes with their history', async () => {
    const listed = await app.call('GET', '/api/v1/health-checks?search=switch');
    const id = listed.body.data[0].id;
    const updated = await app.call('PUT', `/api/v1/health-checks/${id}`, {
      interval_seconds: 60,
      port: 70000,
    });
    expect(updated.status).toBe(400);
    const ok = await app.call('PUT', `/api/v1/health-checks/${id}`, { interval_seconds: 60 });
    expect(ok.body.interval_seconds).toBe(60);
    expect((await app.call('DELETE', `/api/v1/health-checks/${id}`)).status).toBe(204);
    expect((await app.call('GET', `/api/v1/health-checks/${id}/history`)).status).toBe(404);
  });
});

describe('hostile endpoints', () => {
  it('keeps 10 of a 50-certificate chain and records a 1 MB certificate as an error, scanning on', async () => {
    const chainLeaf = await leaf(
      'chain.discovery.test',
      new Date(now.getTime() - DAY),
      new Date(now.getTime() + 30 * DAY),
    );
    const filler = Array.from({ length: 49 }, () => live.cert).join('');
    const longChain = tls.createServer({ cert: chainLeaf.cert + filler, key: chainLeaf.key }, (s) => s.end());
    longChain.on('tlsClientError', () => {});
    const keys = await generateKeyPair('ECDSA-P256');
    const huge = issueCertificate(
      {
        subject: 'CN=huge.discovery.test',
        publicKey: keys.publicKey,
        notBefore: new Date(now.getTime() - DAY),
        notAfter: new Date(now.getTime() + 30 * DAY),
        subjectAltNames: Array.from({ length: 14_000 }, (_, i) => ({
          type: 'dns' as const,
          value: `${'x'.repeat(50)}-${i}.huge.discovery.test`,
        })),
      },
      authority,
    );
    expect(huge.der.length).toBeGreaterThan(1_000_000);
    const hugeServer = tls.createServer(
      { cert: certificateToPem(huge.der), key: exportPkcs8Pem(keys.privateKey) },
      (s) => s.end(),
    );
    hugeServer.on('tlsClientError', () => {});
    const listen = (s: tls.Server) =>
      new Promise<number>((resolve) =>
        s.listen(0, '127.0.0.1', () => resolve((s.address() as net.AddressInfo).port)),
      );
    const [chainPort, hugePort] = [await listen(longChain), await listen(hugeServer)];
    try {
      const target = await app.call('POST', '/api/v1/network-scan/targets', {
        name: 'hostile',
        cidrs: ['127.0.0.1'],
        ports: [chainPort, hugePort, endpoints.live!.port],
      });
      const started = await app.call('POST', `/api/v1/network-scan/targets/${target.body.id}/scan`);
      const scan = await waitForScan(started.body.id);
      expect(scan.status).toBe('completed');
      expect(scan.endpoints_tls).toBe(2);
      expect(scan.errors.map((e: { port: number }) => e.port)).toEqual([hugePort]);
      const found = await app.call('GET', `/api/v1/discovery/certificates?seen_port=${chainPort}`);
      expect(found.body.data[0].fingerprint_sha256).toBe(chainLeaf.fingerprint);
      // The peer's list is walked by issuer links (no loops), and at most 10 are kept.
      expect((found.body.data[0].chain_pem.match(/BEGIN CERTIFICATE/g) ?? []).length).toBeLessThanOrEqual(9);
    } finally {
      longChain.close();
      hugeServer.close();
    }
  });
});

describe('host discovery reports', () => {
  it("records an agent's certificate files as sightings of its own, with the agent's key only", async () => {
    const registered = await app.call('POST', '/api/v1/agents', {
      name: 'files-01',
      hostname: 'files-01.example.test',
      os: 'linux',
      architecture: 'amd64',
      ip_address: '10.0.0.8',
      version: '2.0.0',
    });
    expect(registered.status).toBe(201);
    const { id, api_key: key } = registered.body;
    const report = {
      certificates: [
        { path: '/etc/ssl/old.pem', pem: expired.cert },
        { path: '/etc/ssl/broken.pem', pem: 'not a certificate' },
        { path: '/etc/ssl/new.pem', pem: live2.cert + live.cert },
      ],
    };
    expect((await app.call('POST', `/api/v1/agents/${id}/discoveries`, report)).status).toBe(403);
    const res = await app.call('POST', `/api/v1/agents/${id}/discoveries`, report, { token: key });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      source: id,
      status: 'completed',
      endpoints_total: 3,
      certificates_found: 2,
      errors_count: 1,
    });
    expect(res.body.errors[0]).toMatchObject({ address: '/etc/ssl/broken.pem', reason: 'invalid_input' });
    const mine = await app.call('GET', `/api/v1/discovery/certificates?source=${id}`);
    expect(mine.body.data.map((c: { fingerprint_sha256: string }) => c.fingerprint_sha256).sort()).toEqual(
      [expired.fingerprint, live2.fingerprint].sort(),
    );
    // A second agent reporting the same certificate adds a sighting to the same record.
    const other = await app.call('POST', '/api/v1/agents', {
      name: 'files-02',
      hostname: 'files-02.example.test',
      os: 'linux',
      architecture: 'amd64',
      ip_address: '10.0.0.9',
      version: '2.0.0',
    });
    const again = await app.call(
      'POST',
      `/api/v1/agents/${other.body.id}/discoveries`,
      { certificates: [{ path: '/srv/tls/old.pem', pem: expired.cert }] },
      { token: other.body.api_key },
    );
    expect(again.body.certificates_new).toBe(0);
    const old = (await app.call('GET', `/api/v1/discovery/certificates?source=${other.body.id}`)).body
      .data[0];
    expect(old.fingerprint_sha256).toBe(expired.fingerprint);
    expect(old.sightings.map((s: { source: string }) => s.source)).toEqual(
      expect.arrayContaining([id, other.body.id]),
    );
    const fromPath = await app.call(
      'GET',
      '/api/v1/discovery/certificates?seen_address=%2Fetc%2Fssl%2Fnew.pem',
    );
    expect(fromPath.body.data[0].chain_pem).toContain('BEGIN CERTIFICATE');
  });
});

describe('one scan per target at a time', () => {
  it('joins a second request to the running scan', async () => {
    const target = await app.call('POST', '/api/v1/network-scan/targets', {
      name: 'slow',
      cidrs: ['127.0.0.1'],
      ports: [endpoints.hang!.port],
    });
    const [a, b] = await Promise.all([
      app.services.discovery.startScan({ type: 'api_key', id: 'test' }, target.body.id),
      app.services.discovery.startScan({ type: 'api_key', id: 'test' }, target.body.id),
    ]);
    expect(b.scan.id).toBe(a.scan.id);
    const again = await app.call('POST', `/api/v1/network-scan/targets/${target.body.id}/scan`);
    expect(again.body.id).toBe(a.scan.id);
    const done = await a.done;
    expect(done.errors[0]?.reason).toBe('timed_out');
    const next = await app.services.discovery.startScan({ type: 'api_key', id: 'test' }, target.body.id);
    expect(next.scan.id).not.toBe(a.scan.id);
    await next.done;
  });
});

describe('SNI names and host names', () => {
  it('tries every SNI name on every address and records an unresolvable host as an error', async () => {
    const target = await app.call('POST', '/api/v1/network-scan/targets', {
      name: 'sni',
      cidrs: ['127.0.0.1'],
      hosts: ['no-such-host.invalid'],
      ports: [endpoints.live!.port],
      sni_names: ['sni.discovery.test'],
    });
    expect(target.status).toBe(201);
    const started = await app.call('POST', `/api/v1/network-scan/targets/${target.body.id}/scan`);
    const scan = await waitForScan(started.body.id);
    expect(scan).toMatchObject({
      status: 'completed',
      endpoints_total: 3,
      endpoints_tls: 2,
      errors_count: 1,
    });
    expect(scan.errors[0]).toMatchObject({ address: 'no-such-host.invalid', reason: 'dns_failed' });
    const found = await app.call('GET', `/api/v1/discovery/certificates?scan_id=${scan.id}`);
    const record = found.body.data[0];
    expect(record.fingerprint_sha256).toBe(live.fingerprint);
    expect(record.sightings.map((s: { sni: string | null }) => s.sni)).toEqual(
      expect.arrayContaining([null, 'sni.discovery.test']),
    );
  });
});
