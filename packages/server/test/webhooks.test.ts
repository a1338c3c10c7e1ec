import { mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@certwright/core';
import { staticResolver } from '@certwright/core/net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.js';
import { type RunningServer, startServer } from '../src/index.js';
import { bearer, httpsCall } from './support/https.js';
import { makeTestPki } from './support/openssl-pki.js';

const SECRET = 'webhooks-test-secret-0123456789abcdef';
const pki = makeTestPki(['server']);
const ca = readFileSync(pki.ca);

async function poll<T>(read: () => Promise<T> | T, done: (value: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * The running server (in-process, so the test-only loopback opt-in can be handed to it; no
 * configuration variable reaches it) delivers a certificate's expiry warning to a webhook.
 */
describe('a certificate nearing expiry produces a delivered webhook through the running server', () => {
  let server: RunningServer;
  let receiver: http.Server;
  let port: number;
  const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    port = (receiver.address() as AddressInfo).port;
    const config = parseConfig({
      SVC_TLS_CERT_PATH: pki.issued.server!.cert,
      SVC_TLS_KEY_PATH: pki.issued.server!.key,
      SVC_AUTH_SECRET: SECRET,
      SVC_LISTEN_ADDR: '127.0.0.1',
      SVC_PORT: '0',
      SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'cw-webhooks-')),
    });
    server = await startServer(config, silentLogger, {
      webhooks: { loopback: 'when-listed', resolve: staticResolver({ 'receiver.test': '127.0.0.1' }) },
      renewalScanIntervalMs: 1000,
    });
    await server.ready;
  }, 180_000);
  afterAll(async () => {
    await server?.close();
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  it('delivers the ExpirationWarning with the alert variables filled from the certificate', async () => {
    const call = async (method: string, path: string, body?: unknown) => {
      const reply = await httpsCall(server.port, ca, path, { method, body, headers: bearer(SECRET) });
      if (reply.status >= 400) throw new Error(`${method} ${path} → ${reply.status} ${reply.body}`);
      return reply.json;
    };
    await call('PUT', '/api/system/settings/webhook-security', { allowed_private_ranges: '127.0.0.1' });
    const hook = await call('POST', '/api/notifications/webhooks', {
      name: 'expiry to chat',
      url: `http://receiver.test:${port}/alerts/{{.ResourceName}}`,
      service: 'generic',
      events: ['ExpirationWarning'],
      template:
        '{"text": {{printf "%s: %s (%d days left, threshold %d)" (.Level | title) .Message .Value .Threshold | json}}, "id": {{.ResourceID | json}}}',
      headers: [{ name: 'Authorization', value: 'Bearer receiver-token' }],
    });
    const owner = await call('POST', '/api/v1/owners', { name: 'Owner', email: 'owner@example.test' });
    const team = await call('POST', '/api/v1/teams', { name: 'Team' });
    const issuer = await call('POST', '/api/v1/issuers', { name: 'Test Local CA', type: 'Local' });
    const profile = await call('POST', '/api/v1/profiles', { name: 'short', max_validity_days: 20 });
    const policy = await call('POST', '/api/v1/renewal-policies', {
      name: 'warn early',
      renewal_window_days: 1,
      alert_thresholds_days: [30],
    });
    const cert = await call('POST', '/api/v1/certificates', {
      name: 'api "edge"',
      common_name: 'api.example.com',
      sans: ['api.example.com'],
      renewal_policy_id: policy.id,
      issuer_id: issuer.id,
      owner_id: owner.id,
      team_id: team.id,
      profile_id: profile.id,
    });
    await poll(
      () => received.length,
      (n) => n > 0,
      'the webhook delivery',
    );
    const got = received[0]!;
    expect(got.headers.authorization).toBe('Bearer receiver-token');
    const body = JSON.parse(got.body);
    expect(body.id).toBe(cert.id);
    expect(body.text).toMatch(
      /^Warning: Certificate api "edge" expires in 19 day\(s\) \(19 days left, threshold 30\)$/,
    );
    const deliveries = await call('GET', `/api/notifications/webhooks/${hook.id}/deliveries`);
    expect(deliveries.data[0]).toMatchObject({
      type: 'ExpirationWarning',
      status: 'sent',
      certificate_id: cert.id,
    });
    expect(got.headers['idempotency-key']).toBe(deliveries.data[0].id);
    const metrics = await httpsCall(server.port, ca, '/metrics', { headers: bearer(SECRET) });
    expect(metrics.body).toMatch(
      /^svc_webhook_deliveries_total\{service="generic",outcome="delivered"\} 1$/m,
    );
  }, 180_000);
});
