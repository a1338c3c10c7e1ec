import { once } from 'node:events';
import {
  createReadStream,
  createWriteStream,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecretBox, type Storage } from '@certwright/core';
import { createMysqlStorage } from '@certwright/storage-mysql';
import { createPgliteStorage, createPostgresStorage } from '@certwright/storage-pg';
import { createMigratedPgliteStorage } from '@certwright/storage-pg/testing';
import {
  createSqlStorage,
  restoreBackup,
  type SqlStorage,
  verifyBackup,
  writeBackup,
} from '@certwright/storage-sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTempDatabase as createTempMysql, mysqlSkipReason } from '../../storage-mysql/test/helpers.js';
import {
  createTempDatabase as createTempPostgres,
  postgresSkipReason,
} from '../../storage-pg/test/helpers.js';
import { seedSecrets } from '../../storage-sql/test/keyring-suite.js';

/**
 * Backups at the storage level, across engines: what one engine writes another restores, row for
 * row, secret for secret, with the audit chain verifying; and what a restore refuses.
 */

const key = SecretBox.generateKey();
const box = () => new SecretBox(key);
const dir = mkdtempSync(join(tmpdir(), 'cw-backup-engines-'));
const disposers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const dispose of disposers.reverse()) await dispose().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

type Engine = 'pglite' | 'postgres' | 'mysql';
let skips: Partial<Record<Engine, string>> = {};
beforeAll(async () => {
  skips = { postgres: await postgresSkipReason(), mysql: await mysqlSkipReason() };
});

/** An empty database of `engine` (not migrated); the test closes what it opens. */
async function emptyDatabase(engine: Engine): Promise<(b: SecretBox) => SqlStorage | Promise<SqlStorage>> {
  if (engine === 'pglite') {
    const dataDir = join(dir, `pglite-${Math.random().toString(36).slice(2)}`);
    return (b) => createPgliteStorage({ dataDir }, { secretBox: b });
  }
  const database = engine === 'postgres' ? await createTempPostgres() : await createTempMysql();
  disposers.push(() => database.drop());
  return (b) =>
    engine === 'postgres'
      ? createPostgresStorage(database.url, { secretBox: b })
      : createMysqlStorage(database.url, { secretBox: b });
}

async function backupTo(storage: SqlStorage, file: string): Promise<void> {
  const out = createWriteStream(file);
  await writeBackup(
    storage.db,
    storage.flavor,
    {
      write: async (text) => {
        if (!out.write(text)) await once(out, 'drain');
      },
    },
    { release: 'test', engine: storage.engine, encryptionKeyId: box().keyId, keyIds: [box().keyId] },
  );
  out.end();
  await once(out, 'finish');
}

const trailOf = async (s: Storage) => (await s.audit.list({ perPage: 500 })).items.map((e) => e.hash);

describe('backups across engines', () => {
  for (const [from, to] of [
    ['pglite', 'postgres'],
    ['postgres', 'mysql'],
    ['mysql', 'pglite'],
  ] as const) {
    it(`restores a backup taken on ${from} into ${to}: every row, every secret, the audit chain`, async (ctx) => {
      const skip = skips[from] ?? skips[to];
      if (skip) return ctx.skip(skip);
      const source =
        from === 'pglite'
          ? await createMigratedPgliteStorage({ secretBox: box() })
          : await (await emptyDatabase(from))(box());
      if (from !== 'pglite') await source.migrate();
      let file: string;
      let expected: unknown;
      let trail: string[];
      let readAll: (s: Storage) => Promise<unknown>;
      try {
        readAll = await seedSecrets(source, `${from}${to}`);
        for (let i = 0; i < 5; i += 1) {
          await source.audit.append({
            actor: 'admin',
            actor_type: 'api_key',
            action: 'certificate_created',
            resource_type: 'certificate',
            resource_id: `mc-${i}`,
            category: 'cert_lifecycle',
            details: { i, text: 'ünïcode ✓' },
          });
        }
        expected = await readAll(source);
        trail = await trailOf(source);
        file = join(dir, `${from}-${to}.cwbackup`);
        await backupTo(source, file);
      } finally {
        await source.close();
      }

      const openTarget = await emptyDatabase(to);
      const target = await openTarget(box());
      try {
        const result = await restoreBackup(target.db, target.flavor, () => createReadStream(file), {
          // Inside the restore's transaction: the chain verifies under this keyring, or nothing stays.
          verify: async (trx) => {
            const inside = createSqlStorage({
              db: trx,
              flavor: target.flavor,
              engine: target.engine,
              secretBox: box(),
            });
            expect(await inside.audit.verify()).toMatchObject({ ok: true });
          },
        });
        expect(result.counts.certificate_versions).toBeGreaterThanOrEqual(12);
        expect(result.counts.audit_events).toBe(trail.length);
      } finally {
        await target.close();
      }
      const reopened = await openTarget(box());
      try {
        await reopened.migrate();
        expect(await readAll(reopened)).toEqual(expected);
        expect(await trailOf(reopened)).toEqual(trail);
        expect(await reopened.audit.verify()).toMatchObject({ ok: true, checked: trail.length });
      } finally {
        await reopened.close();
      }
    }, 180_000);
  }
});

describe('what a restore refuses', () => {
  let file: string;
  beforeAll(async () => {
    const source = await createMigratedPgliteStorage({ secretBox: box() });
    try {
      await seedSecrets(source, 'refusals');
      file = join(dir, 'refusals.cwbackup');
      await backupTo(source, file);
    } finally {
      await source.close();
    }
  }, 120_000);

  const variant = (name: string, change: (text: string) => string) => {
    const path = join(dir, name);
    writeFileSync(path, change(readFileSync(file, 'utf8')));
    return path;
  };

  it('refuses a damaged part, a cut-off file and a rewritten manifest before writing anything', async () => {
    const target = await createPgliteStorage({ memory: true }, { secretBox: box() });
    try {
      const cases = {
        // One character of a certificate row changed: its part's digest no longer matches.
        damaged: variant('damaged', (t) => t.replace('"CN=test"', '"CN=tesT"')),
        cut: variant('cut', (t) => t.slice(0, Math.floor(t.length / 2))),
        manifest: variant('manifest', (t) =>
          t.replace(/"rows":(\d+),"sha256"(?=[^\n]*\n?$)/, '"rows":999999,"sha256"'),
        ),
      };
      await expect(
        restoreBackup(target.db, target.flavor, () => createReadStream(cases.damaged)),
      ).rejects.toThrow(/part certificate_versions does not match its SHA-256/);
      await expect(
        restoreBackup(target.db, target.flavor, () => createReadStream(cases.cut)),
      ).rejects.toMatchObject({
        code: 'validation_failed',
      });
      await expect(verifyBackup(createReadStream(cases.manifest))).rejects.toThrow(
        /the manifest does not match part/,
      );
      // Nothing was written: not even the schema.
      expect(await target.db.introspection.getTables()).toEqual([]);
    } finally {
      await target.close();
    }
  });

  it('refuses a database that holds anything, and rolls back when a check inside the restore fails', async () => {
    const used = await createMigratedPgliteStorage({ secretBox: box() });
    try {
      await expect(restoreBackup(used.db, used.flavor, () => createReadStream(file))).rejects.toThrow(
        /the target database is not empty/,
      );
    } finally {
      await used.close();
    }
    const target = await createPgliteStorage({ memory: true }, { secretBox: box() });
    try {
      await expect(
        restoreBackup(target.db, target.flavor, () => createReadStream(file), {
          verify: async () => {
            throw new Error('the audit chain does not verify');
          },
        }),
      ).rejects.toThrow(/does not verify/);
      // The schema stays (created before the transaction), every row is gone: a retry is accepted.
      expect(await target.db.selectFrom('certificates').select('id').execute()).toEqual([]);
      expect(
        (await restoreBackup(target.db, target.flavor, () => createReadStream(file))).counts.certificates,
      ).toBeGreaterThan(0);
    } finally {
      await target.close();
    }
  });
});
