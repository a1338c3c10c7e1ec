import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresSkipReason } from '../../storage-pg/test/helpers.js';
import { makeTestPki } from './support/openssl-pki.js';
import { runServer } from './support/server-process.js';

/** Polls for up to two minutes: a ceiling for a loaded machine, not a timing assertion. */
async function waitFor(probe: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (probe()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A loopback port nothing listens on: bound, read, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const retries = (output: string) =>
  output
    .split('\n')
    .filter((l) => l.startsWith('{') && l.includes('dependency not reachable yet'))
    .map((l) => JSON.parse(l) as { dependency?: string; cause?: string });

const pgSkip = await postgresSkipReason();
if (pgSkip) console.warn(`skipping the missing-database start-up test: ${pgSkip}`);

describe('start-up errors name what to fix', () => {
  const pki = makeTestPki(['server']);
  const env = {
    SVC_LISTEN_ADDR: '127.0.0.1',
    SVC_PORT: '0',
    SVC_TLS_CERT_PATH: pki.issued.server!.cert,
    SVC_TLS_KEY_PATH: pki.issued.server!.key,
    SVC_AUTH_SECRET: `startup-${randomBytes(12).toString('hex')}`,
    SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  };
  let holder: Server | undefined;
  afterAll(async () => {
    await new Promise((resolve) => (holder ? holder.close(resolve) : resolve(undefined)));
  });

  it('refuses a malformed SVC_DATABASE_URL before listening, exit 2, without echoing the password', async () => {
    const run = runServer({ ...env, SVC_DATABASE_URL: 'postgres://app:hunter#2@127.0.0.1:5432/test' });
    expect(await run.exited).toBe(2);
    expect(run.output()).toMatch(/SVC_DATABASE_URL: is not a valid URL/);
    expect(run.output()).not.toContain('hunter');
    expect(run.output()).not.toContain('listening');
  });

  it('names SVC_PORT when the port is in use, exit 2', async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder!.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as { port: number };
    const run = runServer({ ...env, SVC_PORT: String(port) });
    expect(await run.exited).toBe(2);
    expect(run.output()).toContain(`SVC_PORT=${port}: 127.0.0.1:${port} is already in use`);
  });

  it('exits 2 naming the variable when a TLS file is missing', async () => {
    const run = runServer({ ...env, SVC_TLS_KEY_PATH: `${pki.issued.server!.key}.missing` });
    expect(await run.exited).toBe(2);
    expect(run.output()).toMatch(/SVC_TLS_KEY_PATH: cannot read .*\(ENOENT\)/);
  });

  it('logs the database host:port and the cause on every retry while it is unreachable', async () => {
    const port = await closedPort();
    const run = runServer({ ...env, SVC_DATABASE_URL: `postgres://app:hunter2@127.0.0.1:${port}/test` });
    try {
      await waitFor(() => retries(run.output()).length >= 2, 'two retries');
      for (const line of retries(run.output()).slice(0, 2)) {
        expect(line.dependency).toBe(`127.0.0.1:${port}/test`);
        expect(line.cause).toMatch(/^ECONNREFUSED: /);
      }
      expect(run.output()).not.toContain('hunter2');
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
    }
  });

  it.skipIf(pgSkip !== undefined)(
    'waits out a database that does not exist yet, naming it and the cause',
    async () => {
      const name = `certwright_missing_${randomBytes(4).toString('hex')}`;
      const run = runServer({ ...env, SVC_DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${name}` });
      try {
        await waitFor(() => retries(run.output()).length >= 2, 'two retries');
        for (const line of retries(run.output()).slice(0, 2)) {
          expect(line.dependency).toBe(`127.0.0.1:5432/${name}`);
          expect(line.cause).toBe(`3D000: database "${name}" does not exist`);
        }
      } finally {
        run.child.kill('SIGTERM');
        await run.exited;
      }
    },
  );
});
