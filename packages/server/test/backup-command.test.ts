import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { SecretBox } from '@certwright/core';
import { copyMigratedPgliteDataDir } from '@certwright/storage-pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTempDatabase as createTempMysql, mysqlSkipReason } from '../../storage-mysql/test/helpers.js';
import {
  createTempDatabase as createTempPostgres,
  postgresSkipReason,
} from '../../storage-pg/test/helpers.js';
import { bearer, httpsCall } from './support/https.js';
import { makeTestPki } from './support/openssl-pki.js';
import { ocspStatusAt } from './support/scale.js';
import { runServerCommand, type ServerProcess, startServerProcess } from './support/server-process.js';

/**
 * `certwright-server backup` and `restore` as an operator runs them: a backup taken while a server
 * writes, restored into another engine, a server started on the restored database answering OCSP
 * for a serial issued before the backup; and each refusal with its exit code.
 */

const SECRET = 'backup-command-test-secret-01234';
const pki = makeTestPki(['server']);
const ca = readFileSync(pki.ca);
const b64 = (key: Uint8Array) => Buffer.from(key).toString('base64');
const dir = mkdtempSync(join(tmpdir(), 'cw-backup-command-'));
const disposers: (() => Promise<void>)[] = [];
let skip: string | undefined;

beforeAll(async () => {
  skip = (await postgresSkipReason()) ?? (await mysqlSkipReason());
});
afterAll(async () => {
  for (const dispose of disposers.reverse()) await dispose().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

const serverEnv = (extra: Record<string, string>) => ({
  SVC_TLS_CERT_PATH: pki.issued.server!.cert,
  SVC_TLS_KEY_PATH: pki.issued.server!.key,
  SVC_AUTH_SECRET: SECRET,
  SVC_LISTEN_ADDR: '127.0.0.1',
  SVC_PORT: '0',
  ...extra,
});

const call = (server: ServerProcess, method: string, path: string, body?: unknown) =>
  httpsCall(server.port, ca, path, { method, body, headers: bearer(SECRET) });

async function stop(server: ServerProcess): Promise<void> {
  server.child.kill('SIGTERM');
  await server.exited;
}

async function command(args: string[], env: Record<string, string>) {
  const run = runServerCommand(args, env);
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

async function tempDatabase(engine: 'postgres' | 'mysql'): Promise<string> {
  const database = engine === 'postgres' ? await createTempPostgres() : await createTempMysql();
  disposers.push(() => database.drop());
  return database.url;
}

/** Issues a certificate on a Local CA and returns the CA's id and the serial. */
async function issueOne(server: ServerProcess, name: string): Promise<{ issuerId: string; serial: string }> {
  const issuer = await call(server, 'POST', '/api/v1/issuers', { name: `${name} CA`, type: 'Local' });
  expect(issuer.status).toBe(201);
  const created = await call(server, 'POST', '/api/v1/certificates', {
    name,
    common_name: `${name}.example.com`,
    sans: [`${name}.example.com`],
    renewal_policy_id: 'rp-default',
    issuer_id: issuer.json.id,
    owner_id: 'own-default',
    team_id: 'team-default',
    profile_id: 'prof-default',
  });
  expect(created.status).toBe(201);
  const deadline = Date.now() + 90_000;
  let key = await call(server, 'GET', `/api/v1/certificates/${created.json.id}/key-data`);
  while (key.status !== 200 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    key = await call(server, 'GET', `/api/v1/certificates/${created.json.id}/key-data`);
  }
  expect(key.status).toBe(200);
  return { issuerId: issuer.json.id, serial: key.json.serial_number };
}

async function ownerIds(server: ServerProcess): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let page = 1; ; page += 1) {
    const reply = await call(server, 'GET', `/api/v1/owners?per_page=200&page=${page}`);
    expect(reply.status).toBe(200);
    for (const owner of reply.json.data as { id: string }[]) ids.add(owner.id);
    if ((reply.json.data as unknown[]).length < 200) return ids;
  }
}

describe('certwright-server backup and restore', () => {
  it('backs up PostgreSQL under write load; the restore into MariaDB holds every write acknowledged before it began, and a server on it answers OCSP for an old serial', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const key = b64(SecretBox.generateKey());
    const source = serverEnv({
      SVC_DATABASE_URL: await tempDatabase('postgres'),
      SVC_ENCRYPTION_KEY: key,
      SVC_DATA_DIR: mkdtempSync(join(dir, 'pg-')),
    });
    const file = join(dir, 'under-load.cwbackup.gz');
    const server = await startServerProcess(source);
    const acknowledged: string[] = [];
    let acknowledgedBeforeBackup: string[] = [];
    let old: { issuerId: string; serial: string };
    try {
      old = await issueOne(server, 'old');
      // Two writers create owners until told to stop; each id is recorded once its 201 arrived.
      let writing = true;
      const writer = async (w: number) => {
        for (let i = 0; writing; i += 1) {
          const reply = await call(server, 'POST', '/api/v1/owners', { name: `load ${w}-${i}` });
          expect(reply.status).toBe(201);
          acknowledged.push(reply.json.id);
        }
      };
      const writers = [writer(1), writer(2)];
      while (acknowledged.length < 20) await new Promise((resolve) => setTimeout(resolve, 50));
      acknowledgedBeforeBackup = [...acknowledged];
      const backup = await command(['backup', '--out', file], source);
      const writtenDuring = acknowledged.length - acknowledgedBeforeBackup.length;
      writing = false;
      await Promise.all(writers);
      expect(backup.stderr).toMatch(/backed up \d+ tables/);
      expect(backup.code).toBe(0);
      expect(JSON.parse(backup.stdout)).toMatchObject({ engine: 'postgres', format: 1 });
      // The load really overlapped the backup.
      expect(writtenDuring).toBeGreaterThan(0);
    } finally {
      await stop(server);
    }

    const target = serverEnv({
      SVC_DATABASE_URL: await tempDatabase('mysql'),
      SVC_ENCRYPTION_KEY: key,
      SVC_DATA_DIR: mkdtempSync(join(dir, 'mysql-')),
    });
    const restore = await command(['restore', '--in', file], target);
    expect(restore.stderr).toMatch(/restored and verified/);
    expect(restore.code).toBe(0);
    const report = JSON.parse(restore.stdout);
    expect(report).toMatchObject({ restored: true, engine: 'mysql', from_engine: 'postgres' });
    expect(report.audit_chain.checked).toBeGreaterThan(acknowledgedBeforeBackup.length);

    const restored = await startServerProcess(target);
    try {
      const owners = await ownerIds(restored);
      for (const id of acknowledgedBeforeBackup) expect(owners.has(id)).toBe(true);
      // Nothing the backup holds was made up: every owner but the seeded one was acknowledged.
      const known = new Set(acknowledged);
      for (const id of owners) if (id !== 'own-default') expect(known.has(id)).toBe(true);
      expect(owners.size).toBe(report.counts.owners);
      const verify = await call(restored, 'GET', '/api/v1/audit/verify');
      expect(verify.json).toMatchObject({ ok: true });
      expect(await ocspStatusAt(restored.port, ca, old.issuerId, old.serial)).toBe('good');
    } finally {
      await stop(restored);
    }
  }, 600_000);

  describe('from the embedded database into PostgreSQL', () => {
    let key: string;
    let dataDir: string;
    let file: string;
    let old: { issuerId: string; serial: string };
    let keyData: unknown;

    beforeAll(async () => {
      if (skip) return;
      dataDir = mkdtempSync(join(dir, 'pglite-'));
      key = b64((await copyMigratedPgliteDataDir(join(dataDir, 'pglite'))).key);
      const env = serverEnv({ SVC_DATA_DIR: dataDir, SVC_ENCRYPTION_KEY: key });
      const server = await startServerProcess(env);
      try {
        old = await issueOne(server, 'embedded');
        const certs = await call(server, 'GET', '/api/v1/certificates?per_page=10');
        const id = (certs.json.data as { id: string; name: string }[]).find((c) => c.name === 'embedded')!.id;
        keyData = (await call(server, 'GET', `/api/v1/certificates/${id}/key-data`)).json;
      } finally {
        await stop(server);
      }
      file = join(dir, 'embedded.cwbackup');
      const backup = await command(['backup', '--out', file], {
        SVC_DATA_DIR: dataDir,
        SVC_ENCRYPTION_KEY: key,
      });
      expect(backup.code, backup.stderr).toBe(0);
    }, 400_000);

    it('refuses a damaged backup, a wrong key and a non-empty target, each with its exit code, writing nothing', async (ctx) => {
      if (skip) return ctx.skip(skip);
      const url = await tempDatabase('postgres');
      const env = {
        SVC_DATABASE_URL: url,
        SVC_ENCRYPTION_KEY: key,
        SVC_DATA_DIR: mkdtempSync(join(dir, 'r-')),
      };
      const text = readFileSync(file, 'utf8');
      const damagedFile = join(dir, 'damaged.cwbackup');
      writeFileSync(damagedFile, text.replace('"embedded.example.com"', '"embedded.example.org"'));
      expect(readFileSync(damagedFile, 'utf8')).not.toBe(text);
      const damaged = await command(['restore', '--in', damagedFile], env);
      expect(damaged.stderr).toMatch(/does not match its SHA-256/);
      expect(damaged.code).toBe(5);

      const stranger = await command(['restore', '--in', file], {
        ...env,
        SVC_ENCRYPTION_KEY: b64(SecretBox.generateKey()),
      });
      expect(stranger.stderr).toMatch(/sealed under key [0-9a-f]{16}, which the keyring .* lacks/);
      expect(stranger.code).toBe(4);

      const noKey = await command(['restore', '--in', file], {
        SVC_DATABASE_URL: url,
        SVC_DATA_DIR: env.SVC_DATA_DIR,
      });
      expect(noKey.stderr).toMatch(/set SVC_ENCRYPTION_KEY/);
      expect(noKey.code).toBe(4);

      const usage = await command(['restore'], env);
      expect(usage.code).toBe(2);

      // None of the refusals wrote anything: the same target takes the backup, then refuses it again.
      const first = await command(['restore', '--in', file], env);
      expect(first.code, first.stderr).toBe(0);
      const again = await command(['restore', '--in', file], env);
      expect(again.stderr).toMatch(/the target database is not empty/);
      expect(again.code).toBe(3);
    }, 400_000);

    it('restores into PostgreSQL, where a server starts, opens the secrets and answers OCSP for the old serial', async (ctx) => {
      if (skip) return ctx.skip(skip);
      const gz = join(dir, 'embedded.cwbackup.gz');
      // A second backup of the same database, compressed this time: the restore reads either.
      const backup = await command(['backup', '--out', gz], {
        SVC_DATA_DIR: dataDir,
        SVC_ENCRYPTION_KEY: key,
      });
      expect(backup.code, backup.stderr).toBe(0);
      expect(gunzipSync(readFileSync(gz)).toString('utf8').split('\n')[0]).toMatch(/"certwright_backup":1/);
      const refused = await command(['backup', '--out', gz], {
        SVC_DATA_DIR: dataDir,
        SVC_ENCRYPTION_KEY: key,
      });
      expect(refused.stderr).toMatch(/exists; a backup never replaces a file/);
      expect(refused.code).toBe(2);

      const env = serverEnv({
        SVC_DATABASE_URL: await tempDatabase('postgres'),
        SVC_ENCRYPTION_KEY: key,
        SVC_DATA_DIR: mkdtempSync(join(dir, 'pg-target-')),
      });
      const restore = await command(['restore', '--in', gz], env);
      expect(restore.code, restore.stderr).toBe(0);
      expect(JSON.parse(restore.stdout)).toMatchObject({ engine: 'postgres', from_engine: 'pglite' });
      const server = await startServerProcess(env);
      try {
        expect(await ocspStatusAt(server.port, ca, old.issuerId, old.serial)).toBe('good');
        const certs = await call(server, 'GET', '/api/v1/certificates?per_page=10');
        const id = (certs.json.data as { id: string; name: string }[]).find((c) => c.name === 'embedded')!.id;
        expect((await call(server, 'GET', `/api/v1/certificates/${id}/key-data`)).json).toEqual(keyData);
        expect((await call(server, 'GET', '/api/v1/audit/verify')).json).toMatchObject({ ok: true });
      } finally {
        await stop(server);
      }
    }, 400_000);
  });
});
