import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { TcpRelay } from '@certwright/core/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTempDatabase, postgresSkipReason } from '../../storage-pg/test/helpers.js';
import { bearer, httpsCall } from './support/https.js';
import { makeTestPki } from './support/openssl-pki.js';
import { redisSkipReason } from './support/redis.js';
import { runServer, type ServerProcess, startServerProcess } from './support/server-process.js';

const SECRET = 'database-test-secret-0123456789';
const skip = await postgresSkipReason();
if (skip) console.warn(`skipping PostgreSQL server tests: ${skip}`);

const get = (port: number, ca: Buffer, path: string) =>
  httpsCall(port, ca, path, { headers: bearer(SECRET) });

/** Polls for up to two minutes: a ceiling for a loaded machine, not a timing assertion. */
async function waitFor(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe.skipIf(skip !== undefined)('certwright-server on PostgreSQL', () => {
  const pki = makeTestPki(['server']);
  const ca = readFileSync(pki.ca);
  const env = {
    SVC_TLS_CERT_PATH: pki.issued.server!.cert,
    SVC_TLS_KEY_PATH: pki.issued.server!.key,
    SVC_AUTH_SECRET: SECRET,
    // Instances sharing a database share its encryption key (another key is refused at start).
    SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  };
  let database: Awaited<ReturnType<typeof createTempDatabase>>;

  beforeAll(async () => {
    database = await createTempDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('starts two instances at the same moment with the schema migrated once', async () => {
    const servers = await Promise.all([
      startServerProcess({ ...env, SVC_DATABASE_URL: database.url }),
      startServerProcess({ ...env, SVC_DATABASE_URL: database.url }),
    ]);
    try {
      for (const server of servers) expect((await get(server.port, ca, '/ready')).status).toBe(200);
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      const { rows } = await client.query(
        'select version, count(*)::int as n from cw_schema_migrations group by version',
      );
      await client.end();
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.every((r) => r.n === 1)).toBe(true);
      // One instance writes, the other reads it: they share the database.
      expect((await get(servers[1]!.port, ca, '/api/v1/renewal-policies/rp-default')).status).toBe(200);
    } finally {
      for (const server of servers) server.child.kill('SIGTERM');
      await Promise.all(servers.map((s) => s.exited));
    }
  });

  it('waits out a database that is down at start, answering 503 until it is back', async () => {
    const relay = new TcpRelay('127.0.0.1', 5432);
    await relay.start();
    await relay.stop();
    const url = new URL(database.url);
    url.host = `127.0.0.1:${relay.port}`;
    const run = runServer({
      ...env,
      SVC_DATABASE_URL: url.toString(),
      SVC_LISTEN_ADDR: '127.0.0.1',
      SVC_PORT: '0',
    });
    let server: ServerProcess | undefined;
    try {
      await waitFor(() => /"url":"https:\/\/127\.0\.0\.1:\d+"/.test(run.output()), 'the listener');
      const port = Number(/"url":"https:\/\/127\.0\.0\.1:(\d+)"/.exec(run.output())![1]);
      server = { ...run, port };
      expect((await get(port, ca, '/health')).status).toBe(200);
      const notReady = await get(port, ca, '/ready');
      expect(notReady.status).toBe(503);
      expect(JSON.parse(notReady.body)).toMatchObject({ status: 'not_ready' });
      const api = await get(port, ca, '/api/v1/renewal-policies');
      expect(api.status).toBe(503);
      expect(api.body).not.toMatch(/127\.0\.0\.1|postgres|ECONNREFUSED/);

      await relay.start();
      await waitFor(
        async () => (await get(port, ca, '/ready')).status === 200,
        'readiness after the database returned',
      );
      expect((await get(port, ca, '/api/v1/renewal-policies')).status).toBe(200);

      // Losing the database later: requests fail with 503 and recover without a restart.
      await relay.stop();
      const lost = await get(port, ca, '/api/v1/renewal-policies');
      expect(lost.status).toBe(503);
      expect(lost.body).not.toMatch(/ECONNREFUSED|SELECT|select /);
      expect((await get(port, ca, '/ready')).status).toBe(503);
      await relay.start();
      await waitFor(async () => (await get(port, ca, '/api/v1/renewal-policies')).status === 200, 'recovery');
      expect(run.output()).not.toContain(database.url);
    } finally {
      server?.child.kill('SIGTERM');
      run.child.kill('SIGTERM');
      await run.exited;
      await relay.stop();
    }
  });
});

const redisSkip = await redisSkipReason();
if (redisSkip) console.warn(`skipping Redis server test: ${redisSkip}`);

describe.skipIf(redisSkip !== undefined)('certwright-server with SVC_REDIS_URL', () => {
  it('reports Redis in /ready next to storage', async () => {
    const pki = makeTestPki(['server']);
    const server = await startServerProcess({
      SVC_TLS_CERT_PATH: pki.issued.server!.cert,
      SVC_TLS_KEY_PATH: pki.issued.server!.key,
      SVC_AUTH_SECRET: SECRET,
      SVC_REDIS_URL: 'redis://127.0.0.1:6379',
    });
    try {
      const ready = await get(server.port, readFileSync(pki.ca), '/ready');
      expect(ready.status).toBe(200);
      expect(JSON.parse(ready.body).checks).toEqual({ storage: { ok: true }, redis: { ok: true } });
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
});
