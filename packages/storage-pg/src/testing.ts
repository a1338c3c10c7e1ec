import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecretBox } from '@certwright/core';
import { MIGRATIONS, migrate, prepareKeyring, sealAuditHead } from '@certwright/storage-sql';
import { PGlite } from '@electric-sql/pglite';
import { Kysely } from 'kysely';
import type { MaintainedStorage, StorageOpenOptions } from './maintained.js';
import { createPgliteStorage, PGLITE_EXTENSIONS, pgliteStorage } from './pglite.js';
import { PgliteDialect } from './pglite-dialect.js';

/**
 * An in-memory PGlite database in the state `createPgliteStorage({ memory: true })` followed by
 * `migrate()` leaves it — every migration applied, the audit head sealed under `secretBox`, the
 * baseline seeded at `clock` — for tests that open many databases.
 *
 * A fresh PGlite runs initdb and then every migration, seconds each time; this loads a copy of the
 * migrated schema instead (well under a second). The schema holds nothing sealed and no seed row,
 * so one copy serves every key and clock; the key- and clock-dependent steps run on the copy
 * exactly as `migrate()` runs them on a fresh database. The copy is made once per process and
 * kept in the temporary directory, shared by the processes of one test run (the name carries a
 * digest of the migrations, so a changed migration never loads a stale copy).
 */
export async function createMigratedPgliteStorage(options: StorageOpenOptions): Promise<MaintainedStorage> {
  const pglite = await PGlite.create({ extensions: PGLITE_EXTENSIONS, loadDataDir: await schemaTemplate() });
  const storage = await pgliteStorage(pglite, ':memory: (migrated schema template)', options);
  // What migrate() does after the migrations of a fresh database: the keyring's state (0034),
  // then the audit head sealed (0006).
  await prepareKeyring(storage.db, 'postgres', options.secretBox, { appliedKeyring: true, fresh: true });
  await sealAuditHead(storage.db, options.secretBox);
  // Nothing left to apply: this seeds the baseline and refreshes statistics.
  await storage.migrate();
  return storage;
}

/**
 * Fills `dataDir` with a PGlite data directory in the state `createPgliteStorage({ dataDir })`
 * followed by `migrate()` leaves it, for tests that start server processes on the embedded default:
 * a copy of one migrated directory made once per test run instead of initdb and every migration
 * in each process. Its secrets are sealed under the returned key, which the caller hands to the
 * process that opens the directory (a server's `encryption-key` file or SVC_ENCRYPTION_KEY). The
 * baseline was seeded when the run's copy was made, with the system clock.
 */
export async function copyMigratedPgliteDataDir(dataDir: string): Promise<{ key: Uint8Array }> {
  const source = await dataDirTemplate();
  cpSync(join(source, 'pglite'), dataDir, { recursive: true });
  return { key: new Uint8Array(readFileSync(join(source, 'key'))) };
}

let dataTemplate: Promise<string> | undefined;

function dataDirTemplate(): Promise<string> {
  dataTemplate ??= (async () => {
    const dir = join(tmpdir(), 'certwright-pglite-templates', `data-${migrationsDigest()}`);
    if (existsSync(dir)) return dir;
    const partial = `${dir}.${process.pid}.partial`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true });
    const key = SecretBox.generateKey();
    const storage = await createPgliteStorage(
      { dataDir: join(partial, 'pglite') },
      { secretBox: new SecretBox(key) },
    );
    try {
      await storage.migrate();
    } finally {
      await storage.close();
    }
    writeFileSync(join(partial, 'key'), key);
    try {
      // Another process of the run may have finished first: its copy is as good as this one.
      renameSync(partial, dir);
    } catch (error) {
      if (!existsSync(dir)) throw error;
      rmSync(partial, { recursive: true, force: true });
    }
    return dir;
  })();
  return dataTemplate;
}

function migrationsDigest(): string {
  const digest = createHash('sha256');
  for (const m of MIGRATIONS) digest.update(`${m.version}\0${m.name}\0${m.up.toString()}\0`);
  return digest.digest('hex').slice(0, 16);
}

let template: Promise<Blob> | undefined;

function schemaTemplate(): Promise<Blob> {
  template ??= loadOrMakeTemplate();
  return template;
}

async function loadOrMakeTemplate(): Promise<Blob> {
  const dir = join(tmpdir(), 'certwright-pglite-templates');
  const file = join(dir, `schema-${migrationsDigest()}.tar`);
  if (existsSync(file)) return new Blob([readFileSync(file)]);
  const pglite = await PGlite.create({ extensions: PGLITE_EXTENSIONS });
  try {
    // The schema only: sealing and seeding depend on the caller's key and clock.
    await migrate(new Kysely({ dialect: new PgliteDialect(pglite) }), 'postgres');
    const dump = await pglite.dumpDataDir('none');
    const bytes = new Uint8Array(await dump.arrayBuffer());
    // Another process of the run may be writing the same file: write aside, then rename, so a
    // reader only ever sees a whole copy.
    mkdirSync(dir, { recursive: true });
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(partial, bytes);
    renameSync(partial, file);
    return new Blob([bytes]);
  } finally {
    await pglite.close();
  }
}
