import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTempDatabase, postgresSkipReason } from '../../storage-pg/test/helpers.js';
import { readOrCreateFile } from '../src/secret-file.js';
import { bearer, httpsCall } from './support/https.js';
import { makeTestPki } from './support/openssl-pki.js';
import { runServer, startServerProcess } from './support/server-process.js';

const SECRET = 'encryption-key-test-secret-0123';
const pki = makeTestPki(['server']);
const ca = readFileSync(pki.ca);
const tlsEnv = {
  SVC_TLS_CERT_PATH: pki.issued.server!.cert,
  SVC_TLS_KEY_PATH: pki.issued.server!.key,
  SVC_AUTH_SECRET: SECRET,
};

describe('files the server creates for itself', () => {
  it('gives every concurrent creator the one winning content, never a partial file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cw-secret-file-'));
    const path = join(dir, 'key');
    const results = await Promise.all(
      Array.from({ length: 24 }, (_, i) => readOrCreateFile(path, () => `content of creator ${i}\n`)),
    );
    const winner = readFileSync(path, 'utf8');
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(results.every((r) => r.content === winner)).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    rmSync(dir, { recursive: true });
  });
});

describe('a generated encryption key that does not open the database', () => {
  it('refuses to start on embedded PGlite whose key file was replaced, naming SVC_ENCRYPTION_KEY', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cw-key-'));
    const first = await startServerProcess({ ...tlsEnv, SVC_DATA_DIR: dataDir });
    // A secret sealed under the first key: a Local CA's configuration.
    const issuer = await httpsCall(first.port, ca, '/api/v1/issuers', {
      method: 'POST',
      body: { name: 'Test Local CA', type: 'Local' },
      headers: bearer(SECRET),
    });
    expect(issuer.status).toBe(201);
    // Its CA is created on first use; its key is sealed in the issuer's config.
    const chain = await httpsCall(first.port, ca, `/api/v1/issuers/${issuer.json.id}/chain`, {
      headers: bearer(SECRET),
    });
    expect(chain.status).toBe(200);
    expect(chain.body).toMatch(/^-----BEGIN CERTIFICATE-----/);
    first.child.kill('SIGTERM');
    await first.exited;

    // The operator lost the key file: the next start generates another key.
    const original = readFileSync(join(dataDir, 'encryption-key'), 'utf8').trim();
    rmSync(join(dataDir, 'encryption-key'));
    const listen = { SVC_DATA_DIR: dataDir, SVC_LISTEN_ADDR: '127.0.0.1', SVC_PORT: '0' };
    const second = runServer({ ...tlsEnv, ...listen });
    expect(await second.exited).not.toBe(0);
    expect(second.output()).toMatch(/sealed under another key.*Set SVC_ENCRYPTION_KEY/);
    expect(second.output()).not.toMatch(/certwright-server ready/);

    // A wrong key given through the variable is refused the same way …
    const generated = readFileSync(join(dataDir, 'encryption-key'), 'utf8').trim();
    const wrong = runServer({ ...tlsEnv, ...listen, SVC_ENCRYPTION_KEY: generated });
    expect(await wrong.exited).not.toBe(0);
    expect(wrong.output()).toMatch(/SVC_ENCRYPTION_KEY does not open the secrets in this database/);

    // … and the original key opens the database and its sealed secrets again.
    const restored = await startServerProcess({ ...tlsEnv, ...listen, SVC_ENCRYPTION_KEY: original });
    try {
      const reread = await httpsCall(restored.port, ca, `/api/v1/issuers/${issuer.json.id}`, {
        headers: bearer(SECRET),
      });
      expect(reread.status).toBe(200);
      expect(reread.json).toMatchObject({ id: issuer.json.id, name: 'Test Local CA', type: 'Local' });
      // The same CA, read back from its sealed config, not a new one minted in its place.
      const again = await httpsCall(restored.port, ca, `/api/v1/issuers/${issuer.json.id}/chain`, {
        headers: bearer(SECRET),
      });
      expect(again.status).toBe(200);
      expect(again.body).toBe(chain.body);
    } finally {
      restored.child.kill('SIGTERM');
      await restored.exited;
    }
  }, 240_000);
});

const skip = await postgresSkipReason();
if (skip) console.warn(`skipping PostgreSQL encryption-key tests: ${skip}`);

describe.skipIf(skip !== undefined)('encryption key with several instances on PostgreSQL', () => {
  let database: Awaited<ReturnType<typeof createTempDatabase>>;
  beforeAll(async () => {
    database = await createTempDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('lets instances started at once in one data directory agree on one generated key', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cw-key-race-'));
    const env = { ...tlsEnv, SVC_DATA_DIR: dataDir, SVC_DATABASE_URL: database.url };
    const started = await Promise.allSettled([0, 1, 2].map(() => startServerProcess(env)));
    const servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    try {
      for (const s of started) if (s.status === 'rejected') throw s.reason;
      const key = readFileSync(join(dataDir, 'encryption-key'), 'utf8');
      expect(key).toMatch(/^[A-Za-z0-9+/]{43}=\n$/);
      expect(statSync(join(dataDir, 'encryption-key')).mode & 0o777).toBe(0o600);
      // Exactly one instance created the key; each passed the start-up key check.
      expect(servers.filter((s) => s.output().includes('created a key in the data directory'))).toHaveLength(
        1,
      );
      for (const server of servers) {
        expect(server.output()).not.toMatch(/EEXIST/);
        expect((await httpsCall(server.port, ca, '/ready')).status).toBe(200);
      }
    } finally {
      for (const server of servers) server.child.kill('SIGTERM');
      await Promise.all(servers.map((s) => s.exited));
    }
  }, 240_000);

  it('refuses an instance whose generated key differs from the one the database was sealed with', async () => {
    // The database of the test above now holds the key check of the first data directory's key.
    const other = runServer({
      ...tlsEnv,
      SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'cw-key-other-')),
      SVC_DATABASE_URL: database.url,
      SVC_LISTEN_ADDR: '127.0.0.1',
      SVC_PORT: '0',
    });
    expect(await other.exited).not.toBe(0);
    expect(other.output()).toMatch(/generated in .*encryption-key.*Set SVC_ENCRYPTION_KEY/);
  });
});
