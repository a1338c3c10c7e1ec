import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTempDatabase, postgresSkipReason } from '../../storage-pg/test/helpers.js';
import { bearer, httpsCall } from './support/https.js';
import { makeTestPki } from './support/openssl-pki.js';
import { type PrivateRedis, redisServerSkipReason, startPrivateRedis } from './support/private-services.js';
import { runServer } from './support/server-process.js';

const skip = (await postgresSkipReason()) ?? redisServerSkipReason();
if (skip) console.warn(`skipping the server-workers test: ${skip}`);

/** Polls for up to two minutes: a ceiling for a loaded machine, not a timing assertion. */
async function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, what: string): Promise<T> {
  for (let i = 0; i < 1200; i++) {
    const found = await probe();
    if (found !== undefined && found !== false) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

interface LogLine {
  msg?: string;
  worker?: string;
  pid?: number;
  url?: string;
  code?: number | null;
  signal?: string | null;
}

const lines = (output: string): LogLine[] =>
  output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * The worker slots that served /metrics, over `tries` separate connections: each scrape answers
 * every worker's series (the primary aggregates them), and a worker's request counter for
 * /metrics grows only when that worker served the scrape.
 */
async function slotsAnswering(port: number, ca: Buffer, secret: string, tries: number): Promise<Set<string>> {
  let body = '';
  for (let i = 0; i < tries; i++) {
    const reply = await httpsCall(port, ca, '/metrics', { headers: bearer(secret) });
    expect(reply.status).toBe(200);
    body = reply.body;
  }
  const seen = new Set<string>();
  for (const line of body.split('\n')) {
    if (!line.startsWith('svc_http_requests_total{') || !line.includes('route="/metrics"')) continue;
    const slot = /worker="(\d+)"/.exec(line);
    if (slot && Number(line.split(' ').at(-1)) > 0) seen.add(slot[1]!);
  }
  return seen;
}

/**
 * SVC_SERVER_WORKERS=2 on PostgreSQL and a private Redis: one primary, two full server
 * processes sharing the port through node:cluster (docs/operations/scaling.md).
 */
describe.skipIf(skip !== undefined)('SVC_SERVER_WORKERS: several listener processes', () => {
  let database: Awaited<ReturnType<typeof createTempDatabase>>;
  let redis: PrivateRedis;
  let server: ReturnType<typeof runServer>;
  let port: number;
  const pki = makeTestPki(['server']);
  const ca = readFileSync(pki.ca);
  const secret = `workers-${randomBytes(12).toString('hex')}`;
  const ready = () => lines(server.output()).filter((l) => l.msg === 'certwright-server ready');
  const started = () => lines(server.output()).filter((l) => l.msg === 'worker started');

  beforeAll(async () => {
    database = await createTempDatabase();
    redis = await startPrivateRedis();
    server = runServer({
      SVC_LISTEN_ADDR: '127.0.0.1',
      SVC_PORT: '0',
      SVC_SERVER_WORKERS: '2',
      SVC_TLS_CERT_PATH: pki.issued.server!.cert,
      SVC_TLS_KEY_PATH: pki.issued.server!.key,
      SVC_AUTH_SECRET: secret,
      SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      SVC_DATABASE_URL: database.url,
      SVC_REDIS_URL: redis.url,
    });
    server.exited.then((code) => {
      if (ready().length < 2)
        console.error(`server exited ${code} before both workers were ready:\n${server.output()}`);
    });
    const both = await waitFor(() => {
      const r = ready();
      return new Set(r.map((l) => l.worker)).size === 2 ? r : undefined;
    }, 'both workers to be ready');
    port = Number(new URL(both[0]!.url!).port);
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGKILL');
      await server.exited;
      // A primary killed outright takes its workers with it (their IPC channel closes).
      for (const w of started()) if (w.pid && alive(w.pid)) process.kill(w.pid, 'SIGKILL');
    }
    await redis?.stop();
    await database?.drop();
  });

  it('answers on one port from both workers, and /metrics reports both', async () => {
    // Both workers listen on the same port: the url each announced is the same.
    expect(new Set(ready().map((l) => new URL(l.url!).port))).toEqual(new Set([String(port)]));
    // Every call opens a new connection; the primary hands connections to workers in turn.
    const seen = await slotsAnswering(port, ca, secret, 12);
    expect(seen).toEqual(new Set(['1', '2']));
  });

  it('reports the storage-derived gauges once, with the same values whichever worker is scraped', async () => {
    const gauges = (body: string) =>
      body
        .split('\n')
        .filter((l) => /^certwright_(certificates|jobs|notifications|metrics_snapshot_ok)[{ ]/.test(l))
        .sort();
    const first = gauges((await httpsCall(port, ca, '/metrics', { headers: bearer(secret) })).body);
    expect(first).toContain('certwright_metrics_snapshot_ok 1');
    // One series per label set: no `worker` label, not repeated per worker.
    expect(first.filter((l) => l.includes('worker='))).toEqual([]);
    expect(new Set(first.map((l) => l.split(' ')[0])).size).toBe(first.length);
    for (let i = 0; i < 6; i++) {
      expect(gauges((await httpsCall(port, ca, '/metrics', { headers: bearer(secret) })).body)).toEqual(
        first,
      );
    }
  });

  it('replaces a worker that dies while the other keeps answering', async () => {
    const victim = started().find((l) => l.worker === '1')!;
    expect(alive(victim.pid!)).toBe(true);
    process.kill(victim.pid!, 'SIGKILL');
    const restarted = await waitFor(
      () => lines(server.output()).find((l) => l.msg === 'worker exited; restarting' && l.pid === victim.pid),
      'the primary to log the restart',
    );
    expect(restarted).toMatchObject({ worker: '1', signal: 'SIGKILL' });
    expect(alive(victim.pid!)).toBe(false);
    // With one worker gone the service answers: the survivor takes every connection.
    for (let i = 0; i < 4; i++) {
      expect((await httpsCall(port, ca, '/health')).status).toBe(200);
    }
    const replacement = await waitFor(
      () => started().find((l) => l.worker === '1' && l.pid !== victim.pid),
      'a replacement worker',
    );
    await waitFor(
      () => ready().filter((l) => l.worker === '1').length === 2 || undefined,
      'the replacement to be ready',
    );
    expect(alive(replacement.pid!)).toBe(true);
    expect(await slotsAnswering(port, ca, secret, 12)).toEqual(new Set(['1', '2']));
  });

  it('stops every worker and exits 0 on SIGTERM', async () => {
    const pids = started()
      .map((l) => l.pid!)
      .filter(alive);
    expect(pids).toHaveLength(2);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    // 'exit' can come before the last output is read: wait for the pipe to close.
    const stdout = server.child.stdout!;
    if (!stdout.closed) await new Promise((resolve) => stdout.once('close', resolve));
    for (const pid of pids) expect(alive(pid)).toBe(false);
    const out = lines(server.output());
    // Each worker drained and stopped as a single server does, then the primary exited.
    expect(
      out
        .filter((l) => l.msg === 'certwright-server stopped')
        .map((l) => l.worker)
        .sort(),
    ).toEqual(['1', '2']);
    expect(out.filter((l) => l.msg === 'worker stopped').map((l) => l.code)).toEqual([0, 0]);
    expect(out.at(-1)?.msg).toBe('all workers stopped');
  });
});

describe('SVC_SERVER_WORKERS above 1 without shared storage', () => {
  it('is refused at start-up, naming what is missing, before any worker starts', async () => {
    const pki = makeTestPki(['server']);
    const run = runServer({
      SVC_LISTEN_ADDR: '127.0.0.1',
      SVC_PORT: '0',
      SVC_SERVER_WORKERS: '2',
      SVC_TLS_CERT_PATH: pki.issued.server!.cert,
      SVC_TLS_KEY_PATH: pki.issued.server!.key,
      SVC_AUTH_SECRET: `workers-${randomBytes(12).toString('hex')}`,
    });
    expect(await run.exited).toBe(2);
    expect(run.output()).toMatch(
      /SVC_SERVER_WORKERS=2 needs shared storage: set SVC_DATABASE_URL \(PostgreSQL or MySQL\); the embedded PGlite database serves one process/,
    );
    expect(run.output()).toMatch(/SVC_SERVER_WORKERS=2 needs SVC_REDIS_URL/);
    expect(run.output()).not.toMatch(/worker started/);
  });
});
