import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, httpsCall } from './support/https.js';
import { makeTestPki } from './support/openssl-pki.js';
import {
  type PrivatePostgres,
  type PrivateRedis,
  privatePostgresSkipReason,
  redisServerSkipReason,
  startPrivatePostgres,
  startPrivateRedis,
} from './support/private-services.js';
import { type ServerProcess, startServerProcess } from './support/server-process.js';

const SECRET = 'fault-readiness-secret-0123456789';
const skip = redisServerSkipReason() ?? privatePostgresSkipReason();
if (skip) console.warn(`skipping readiness fault tests: ${skip}`);

/** Polls for up to two minutes: a ceiling for a loaded machine, not a timing assertion. */
async function waitFor(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * /ready names the dependency that is down (503) while /health stays 200, and both recover
 * without a restart when it returns. Private PostgreSQL and Redis instances are stopped and
 * started; the machine's shared services are never touched.
 */
describe.skipIf(skip !== undefined)('readiness while a dependency is down', () => {
  const pki = makeTestPki(['server']);
  const ca = readFileSync(pki.ca);
  const get = (path: string) => httpsCall(server.port, ca, path, { headers: bearer(SECRET) });
  let pg: PrivatePostgres;
  let redis: PrivateRedis;
  let server: ServerProcess;

  beforeAll(async () => {
    [pg, redis] = await Promise.all([startPrivatePostgres(), startPrivateRedis()]);
    server = await startServerProcess({
      SVC_TLS_CERT_PATH: pki.issued.server!.cert,
      SVC_TLS_KEY_PATH: pki.issued.server!.key,
      SVC_AUTH_SECRET: SECRET,
      SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      SVC_DATABASE_URL: pg.url,
      SVC_REDIS_URL: redis.url,
    });
  });
  afterAll(async () => {
    server?.child.kill('SIGTERM');
    await server?.exited;
    await Promise.all([pg?.destroy(), redis?.stop()]);
  });

  it('reports Redis down, then recovers when it returns', async () => {
    const before = await get('/ready');
    expect(before.status).toBe(200);
    expect(before.json.checks).toEqual({ storage: { ok: true }, redis: { ok: true } });

    await redis.stop();
    await waitFor(async () => (await get('/ready')).status === 503, 'readiness to drop');
    const down = await get('/ready');
    expect(down.json.status).toBe('not_ready');
    expect(down.json.checks.redis.ok).toBe(false);
    expect(down.json.checks.storage).toEqual({ ok: true });
    expect(down.body).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|redis:\/\//);
    expect((await get('/health')).status).toBe(200);
    // Storage-only reads keep working while Redis is down.
    expect((await get('/api/v1/renewal-policies')).status).toBe(200);

    await redis.start();
    await waitFor(async () => (await get('/ready')).status === 200, 'readiness after Redis returned');
    expect((await get('/ready')).json.checks).toEqual({ storage: { ok: true }, redis: { ok: true } });
  });

  it('reports PostgreSQL down, then recovers when it returns', async () => {
    await pg.stop();
    await waitFor(async () => (await get('/ready')).status === 503, 'readiness to drop');
    const down = await get('/ready');
    expect(down.json.checks.storage.ok).toBe(false);
    expect(down.json.checks.redis).toEqual({ ok: true });
    expect(down.body).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|postgres:\/\//);
    expect((await get('/health')).status).toBe(200);
    const api = await get('/api/v1/renewal-policies');
    expect(api.status).toBe(503);
    expect(api.body).not.toMatch(/ECONNREFUSED|select /i);

    await pg.start();
    await waitFor(async () => (await get('/ready')).status === 200, 'readiness after PostgreSQL returned');
    await waitFor(async () => (await get('/api/v1/renewal-policies')).status === 200, 'API recovery');
  });
});
