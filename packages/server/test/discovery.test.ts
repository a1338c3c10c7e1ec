import { mkdtempSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { fingerprintOf, silentLogger } from '@certwright/core';
import {
  certificateToPem,
  createSelfSignedCertificate,
  exportPkcs8Pem,
  generateKeyPair,
  issueCertificate,
  prepareIssuer,
} from '@certwright/core/pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.js';
import { type RunningServer, startServer } from '../src/index.js';
import { bearer, httpsCall } from './support/https.js';
import { makeTestPki } from './support/openssl-pki.js';

const SECRET = 'discovery-test-secret-0123456789abcdef';
const pki = makeTestPki(['server']);
const ca = readFileSync(pki.ca);
const DAY = 86_400_000;

async function poll<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * The running server (in-process, so the test-only loopback opt-in can be handed to it; no
 * configuration variable reaches it): a scan of a loopback target finds the test servers'
 * certificates, one is claimed, and the endpoint health scheduler walks healthy → degraded →
 * down → recovered, then flags a renewal that was never deployed.
 */
describe('discovery and endpoint health through the running server', () => {
  let server: RunningServer;
  let mode: 'tls' | 'close' = 'tls';
  let front: net.Server;
  let backend: tls.Server;
  let port = 0;
  let served = { cert: '', key: '', fingerprint: '' };

  const call = async (method: string, path: string, body?: unknown) => {
    const reply = await httpsCall(server.port, ca, path, { method, body, headers: bearer(SECRET) });
    return { status: reply.status, body: reply.body ? JSON.parse(reply.body) : undefined };
  };

  beforeAll(async () => {
    const caKeys = await generateKeyPair('ECDSA-P256');
    const now = Date.now();
    const root = createSelfSignedCertificate(
      {
        subject: 'CN=server discovery CA',
        notBefore: new Date(now - DAY),
        notAfter: new Date(now + 3650 * DAY),
        basicConstraints: { ca: true },
      },
      caKeys.privateKey,
    );
    const keys = await generateKeyPair('ECDSA-P256');
    const leaf = issueCertificate(
      {
        subject: 'CN=shop.discovery.test',
        publicKey: keys.publicKey,
        notBefore: new Date(now - DAY),
        notAfter: new Date(now + 60 * DAY),
        subjectAltNames: [{ type: 'dns', value: 'shop.discovery.test' }],
        extendedKeyUsage: ['serverAuth'],
      },
      prepareIssuer(root.der, caKeys.privateKey),
    );
    served = {
      cert: certificateToPem(leaf.der),
      key: exportPkcs8Pem(keys.privateKey),
      fingerprint: fingerprintOf(leaf.der),
    };
    backend = tls.createServer({ cert: served.cert, key: served.key }, (s) => s.end());
    backend.on('tlsClientError', () => {});
    front = net.createServer((socket) => {
      socket.on('error', () => {});
      if (mode === 'close') socket.destroy();
      else backend.emit('connection', socket);
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    port = (front.address() as net.AddressInfo).port;

    const config = parseConfig({
      SVC_TLS_CERT_PATH: pki.issued.server!.cert,
      SVC_TLS_KEY_PATH: pki.issued.server!.key,
      SVC_AUTH_SECRET: SECRET,
      SVC_LISTEN_ADDR: '127.0.0.1',
      SVC_PORT: '0',
      SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'cw-discovery-')),
    });
    server = await startServer(config, silentLogger, {
      discovery: { allowLoopback: true, tickMs: 500, timeoutMs: 1500 },
    });
    await server.ready;
  }, 180_000);

  afterAll(async () => {
    await server?.close();
    await new Promise<void>((resolve) => front.close(() => resolve()));
  });

  it('scans, claims, and watches the endpoint through every transition', async () => {
    const target = await call('POST', '/api/v1/network-scan/targets', {
      name: 'loopback',
      cidrs: ['127.0.0.1/32'],
      ports: [port],
    });
    expect(target.status).toBe(201);
    const started = await call('POST', `/api/v1/network-scan/targets/${target.body.id}/scan`);
    expect(started.status).toBe(202);
    const scan = await poll(
      () => call('GET', `/api/v1/discovery/scans/${started.body.id}`),
      (r) => r.body.status !== 'running',
      'the scan',
    );
    expect(scan.body).toMatchObject({ status: 'completed', certificates_found: 1, endpoints_tls: 1 });
    const found = await call('GET', `/api/v1/discovery/certificates?seen_port=${port}`);
    expect(found.body.data[0].fingerprint_sha256).toBe(served.fingerprint);

    // The issuer renewals will use; its CA exists before a foreign certificate is filed under it
    // (a Local CA that holds versions but no CA material refuses to create one).
    const issuer = await call('POST', '/api/v1/issuers', { name: 'Renewals CA', type: 'Local' });
    const first = await call('POST', '/api/v1/certificates', {
      name: 'first',
      common_name: 'first.discovery.test',
      sans: ['first.discovery.test'],
      issuer_id: issuer.body.id,
      owner_id: 'own-default',
      team_id: 'team-default',
      renewal_policy_id: 'rp-default',
      profile_id: 'prof-default',
    });
    await poll(
      () => call('GET', `/api/v1/certificates/${first.body.id}`),
      (r) => r.body.status === 'Active',
      'the first issuance',
    );
    const claimed = await call('POST', `/api/v1/discovery/certificates/${found.body.data[0].id}/claim`, {
      issuer_id: issuer.body.id,
      owner_id: 'own-default',
      team_id: 'team-default',
    });
    expect(claimed.status).toBe(200);
    const certificateId = claimed.body.certificate_id;

    const created = await call('POST', '/api/v1/health-checks', {
      name: 'shop',
      host: '127.0.0.1',
      port,
      certificate_id: certificateId,
      // Never due on its own while the test runs: only the PUTs below make it due.
      interval_seconds: 3600,
      deployment_window_seconds: 0,
    });
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('healthy');
    const id = created.body.id;

    // Each PUT makes the check due; the scheduler's next tick runs it.
    const checkedAgain = async () => {
      const before = (await call('GET', `/api/v1/health-checks/${id}`)).body.last_checked_at;
      await call('PUT', `/api/v1/health-checks/${id}`, { enabled: true });
      return (
        await poll(
          () => call('GET', `/api/v1/health-checks/${id}`),
          (r) => r.body.last_checked_at !== before && r.body.next_check_at > r.body.last_checked_at,
          'a scheduled check',
        )
      ).body;
    };
    mode = 'close';
    const walk: string[] = [];
    for (let i = 0; i < 5; i++) walk.push((await checkedAgain()).status);
    expect(walk).toEqual(['healthy', 'degraded', 'degraded', 'degraded', 'down']);
    mode = 'tls';
    expect((await checkedAgain()).status).toBe('healthy');

    // A renewal the endpoint never received.
    const renewed = await call('POST', `/api/v1/certificates/${certificateId}/renew`, {});
    expect(renewed.status, JSON.stringify(renewed.body)).toBeLessThan(300);
    await poll(
      () => call('GET', `/api/v1/certificates/${certificateId}/versions`),
      (r) => r.body.total === 2,
      'the renewal',
    );
    const stale = await checkedAgain();
    expect(stale.status).toBe('cert_mismatch');
    expect(stale.last_error).toContain('stale deployment');

    const history = await call('GET', `/api/v1/health-checks/${id}/history?per_page=500`);
    expect(history.body.total).toBe(8);
    const alerts = await call('GET', '/api/v1/notifications?type=EndpointHealth&channel=email');
    // healthy→degraded, degraded→down, down→healthy, healthy→cert_mismatch
    expect(alerts.body.total).toBe(4);
    const summary = await call('GET', '/api/v1/health-checks/summary');
    expect(summary.body.by_status.cert_mismatch).toBe(1);
  }, 180_000);
});
