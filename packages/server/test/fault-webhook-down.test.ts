import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@certwright/core';
import { staticResolver } from '@certwright/core/net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.js';
import { type RunningServer, startServer } from '../src/index.js';
import { bearer, httpsCall } from './support/https.js';
import { makeTestPki } from './support/openssl-pki.js';
import { freePort } from './support/private-services.js';

const SECRET = 'webhook-down-secret-0123456789abcdef';
const pki = makeTestPki(['server']);
const ca = readFileSync(pki.ca);

/** Polls for up to two minutes: a ceiling for a loaded machine, not a timing assertion. */
async function poll<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 1200; i++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * A webhook receiver that is down for the whole run (nothing listens on its port): the
 * delivery is recorded as failed with its error and a retry scheduled, nothing else is held up,
 * and the server stays ready. In-process, for the test-only loopback opt-in.
 */
describe('a webhook receiver down for the whole run', () => {
  let server: RunningServer;

  beforeAll(async () => {
    const config = parseConfig({
      SVC_TLS_CERT_PATH: pki.issued.server!.cert,
      SVC_TLS_KEY_PATH: pki.issued.server!.key,
      SVC_AUTH_SECRET: SECRET,
      SVC_LISTEN_ADDR: '127.0.0.1',
      SVC_PORT: '0',
      SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'cw-webhook-down-')),
      SVC_NOTIFICATION_RETRY_INTERVAL: '1s',
    });
    server = await startServer(config, silentLogger, {
      webhooks: { loopback: 'when-listed', resolve: staticResolver({ 'receiver.test': '127.0.0.1' }) },
      renewalScanIntervalMs: 1000,
    });
    await server.ready;
  }, 180_000);
  afterAll(async () => {
    await server?.close();
  });

  it('reports the failed delivery, schedules its retry and keeps serving', async () => {
    const call = async (method: string, path: string, body?: unknown) => {
      const reply = await httpsCall(server.port, ca, path, { method, body, headers: bearer(SECRET) });
      if (reply.status >= 400) throw new Error(`${method} ${path} → ${reply.status} ${reply.body}`);
      return reply.json;
    };
    const downPort = await freePort();
    await call('PUT', '/api/system/settings/webhook-security', { allowed_private_ranges: '127.0.0.1' });
    const hook = await call('POST', '/api/notifications/webhooks', {
      name: 'to a receiver that is down',
      url: `http://receiver.test:${downPort}/alerts`,
      service: 'generic',
      events: ['ExpirationWarning'],
    });
    const owner = await call('POST', '/api/v1/owners', { name: 'Owner', email: 'owner@example.test' });
    const team = await call('POST', '/api/v1/teams', { name: 'Team' });
    const issuer = await call('POST', '/api/v1/issuers', { name: 'Down CA', type: 'Local' });
    const profile = await call('POST', '/api/v1/profiles', { name: 'short', max_validity_days: 20 });
    const policy = await call('POST', '/api/v1/renewal-policies', {
      name: 'warn early',
      renewal_window_days: 1,
      alert_thresholds_days: [30],
    });
    const cert = await call('POST', '/api/v1/certificates', {
      name: 'edge',
      common_name: 'edge.example.com',
      sans: ['edge.example.com'],
      renewal_policy_id: policy.id,
      issuer_id: issuer.id,
      owner_id: owner.id,
      team_id: team.id,
      profile_id: profile.id,
    });
    const deliveries = await poll(
      () => call('GET', `/api/notifications/webhooks/${hook.id}/deliveries`),
      (d) => d.data.some((x: { retry_count: number }) => x.retry_count >= 1),
      'a failed delivery attempt to be recorded',
    );
    const failed = deliveries.data.find((x: { retry_count: number }) => x.retry_count >= 1);
    expect(failed).toMatchObject({ type: 'ExpirationWarning', certificate_id: cert.id });
    expect(['failed', 'pending', 'dead']).toContain(failed.status);
    expect(failed.status).not.toBe('sent');
    expect(failed.last_error).toEqual(expect.any(String));
    expect(failed.last_error).not.toMatch(/\n\s+at /);
    if (failed.status !== 'dead') expect(failed.next_retry_at).toEqual(expect.any(String));
    // Nothing else waits on the receiver: the server is ready and issues certificates.
    expect((await httpsCall(server.port, ca, '/ready')).status).toBe(200);
    const other = await call('POST', '/api/v1/certificates', {
      name: 'other',
      common_name: 'other.example.com',
      sans: ['other.example.com'],
      renewal_policy_id: 'rp-default',
      issuer_id: issuer.id,
      owner_id: owner.id,
      team_id: team.id,
      profile_id: 'prof-default',
    });
    expect(other.id).toEqual(expect.any(String));
    const metrics = await httpsCall(server.port, ca, '/metrics', { headers: bearer(SECRET) });
    expect(metrics.body).toMatch(
      /^svc_webhook_deliveries_total\{service="generic",outcome="(retry|failed)"\} [1-9]/m,
    );
    expect(metrics.body).not.toMatch(/outcome="delivered"\} [1-9]/);
  }, 180_000);
});
