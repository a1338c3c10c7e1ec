import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, httpsCall } from './support/https.js';
import { makeTestPki } from './support/openssl-pki.js';
import { type ServerProcess, startServerProcess } from './support/server-process.js';

const SECRET = 'pki-metrics-test-secret-0123456789';
const MONITORING = fileURLToPath(new URL('../../../docs/operations/monitoring/', import.meta.url));
const promtool = spawnSync('promtool', ['--version']).status === 0;
if (!promtool && process.env.SVC_TEST_REQUIRE_SERVICES === '1') {
  throw new Error('promtool (Debian package prometheus) is required to check the alerting rules');
}
if (!promtool) console.warn('not checking the alerting rules with promtool: it is not installed');

/** Metric names an expression reads (`up` aside, which Prometheus itself writes). */
const namesIn = (expr: string): string[] =>
  [...expr.matchAll(/\b(?:certwright|svc)_[a-z0-9_]+/g)].map((m) => m[0].replace(/_(bucket|sum|count)$/, ''));

/** `name{labels} value` lines of one series name, as label text → value. */
function series(body: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of body.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const space = line.lastIndexOf(' ');
    out.set(line.slice(name.length, space), Number(line.slice(space + 1)));
  }
  return out;
}

describe('/metrics reports the inventory from storage', () => {
  const pki = makeTestPki(['server']);
  const ca = readFileSync(pki.ca);
  let server: ServerProcess;
  const call = (method: string, path: string, body?: unknown) =>
    httpsCall(server.port, ca, path, { method, body, headers: bearer(SECRET) });
  const scrape = async () => {
    const reply = await call('GET', '/metrics');
    expect(reply.status).toBe(200);
    return reply.body;
  };
  const waitForStatus = async (id: string, wanted: string) => {
    let status = '';
    for (let i = 0; i < 300 && status !== wanted; i++) {
      status = (await call('GET', `/api/v1/certificates/${id}`)).json.status;
      if (status !== wanted) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(wanted);
  };

  beforeAll(async () => {
    server = await startServerProcess({
      SVC_TLS_CERT_PATH: pki.issued.server!.cert,
      SVC_TLS_KEY_PATH: pki.issued.server!.key,
      SVC_AUTH_SECRET: SECRET,
      // Every scrape reads storage, so each assertion sees the change before it.
      SVC_METRICS_CACHE: '0s',
    });
  });
  afterAll(async () => {
    server?.child.kill('SIGTERM');
    await server?.exited;
  });

  it('counts by status, exports each certificate’s expiry with names, and follows issuance and revocation', async () => {
    const owner = await call('POST', '/api/v1/owners', { name: 'Alice', email: 'alice@example.com' });
    const team = await call('POST', '/api/v1/teams', { name: 'Platform' });
    const issuer = await call('POST', '/api/v1/issuers', { name: 'Metrics CA', type: 'Local' });
    const before = await scrape();
    expect(series(before, 'certwright_certificates').get('{status="Active"}')).toBe(0);
    expect(series(before, 'certwright_certificate_series_enabled').get('')).toBe(1);

    const created = await call('POST', '/api/v1/certificates', {
      name: 'shop',
      common_name: 'shop.example.com',
      sans: ['shop.example.com'],
      renewal_policy_id: 'rp-default',
      issuer_id: issuer.json.id,
      owner_id: owner.json.id,
      team_id: team.json.id,
      profile_id: 'prof-default',
    });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    await waitForStatus(id, 'Active');
    const certificate = (await call('GET', `/api/v1/certificates/${id}`)).json;
    const notAfter = Math.floor(Date.parse(certificate.expires_at) / 1000);

    const issued = await scrape();
    expect(series(issued, 'certwright_certificates').get('{status="Active"}')).toBe(1);
    expect(series(issued, 'certwright_certificate_expiration_timestamp_seconds')).toEqual(
      new Map([
        [
          `{id="${id}",name="shop",issuer="Metrics CA",owner="Alice",team="Platform",status="Active"}`,
          notAfter,
        ],
      ]),
    );
    const days = (notAfter * 1000 - Date.now()) / 86_400_000;
    const expiring = series(issued, 'certwright_certificates_expiring');
    expect(expiring.get('{within="30d"}')).toBe(days <= 30 ? 1 : 0);
    expect(expiring.get('{within="1d"}')).toBe(0);
    // The issuance ran as a job; it is counted as completed.
    expect(series(issued, 'certwright_jobs').get('{status="Completed"}')).toBeGreaterThanOrEqual(1);
    expect(series(issued, 'certwright_metrics_snapshot_ok').get('')).toBe(1);

    const revoked = await call('POST', `/api/v1/certificates/${id}/revoke`, { reason: 'keyCompromise' });
    expect(revoked.status).toBe(200);
    const after = await scrape();
    const byStatus = series(after, 'certwright_certificates');
    expect([byStatus.get('{status="Active"}'), byStatus.get('{status="Revoked"}')]).toEqual([0, 1]);
    expect([...series(after, 'certwright_certificate_expiration_timestamp_seconds').keys()]).toEqual([
      `{id="${id}",name="shop",issuer="Metrics CA",owner="Alice",team="Platform",status="Revoked"}`,
    ]);
  });

  it("logs every answer in the access log: a refused call's request id is in the server's output", async () => {
    const refused = await httpsCall(server.port, ca, '/api/v1/certificates', {
      headers: bearer('not-the-secret-of-this-server-000'),
    });
    expect(refused.status).toBe(401);
    const id = refused.headers['x-request-id'] as string;
    expect(refused.json.request_id).toBe(id);
    // pino writes asynchronously: read the output until the line is there (bounded).
    let line: Record<string, unknown> | undefined;
    for (let i = 0; i < 100 && !line; i++) {
      line = server
        .output()
        .split('\n')
        .filter((text) => text.includes(`"request_id":"${id}"`) && text.includes('"msg":"access"'))
        .map((text) => JSON.parse(text) as Record<string, unknown>)[0];
      if (!line) await new Promise((r) => setTimeout(r, 50));
    }
    expect(line).toMatchObject({
      level: 30,
      method: 'GET',
      route: '/api/v1/certificates',
      status: 401,
      client: '127.0.0.1',
      principal_kind: null,
      protocol: 'HTTP/1.1',
    });
    expect(server.output()).not.toContain('not-the-secret-of-this-server');
  });

  it('ships alerting rules promtool accepts and a dashboard, both reading only series the server exports', async () => {
    const exported = new Set([...(await scrape()).matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
    const rules = readFileSync(`${MONITORING}certwright.rules.yml`, 'utf8');
    const dashboard = JSON.parse(readFileSync(`${MONITORING}grafana-dashboard.json`, 'utf8')) as {
      panels: { targets: { expr: string }[] }[];
    };
    const expressions = [
      ...[...rules.matchAll(/expr: (?:>-\n)?([\s\S]*?)\n\s+(?:for|labels):/g)].map((m) => m[1]!),
      ...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr)),
    ];
    expect(expressions.length).toBeGreaterThan(15);
    const read = new Set(expressions.flatMap(namesIn));
    expect([...read].filter((name) => !exported.has(name))).toEqual([]);
    if (promtool) {
      const checked = spawnSync('promtool', ['check', 'rules', `${MONITORING}certwright.rules.yml`], {
        encoding: 'utf8',
      });
      expect(checked.stdout + checked.stderr).toContain('SUCCESS: 12 rules found');
      expect(checked.status).toBe(0);
    }
  });
});
