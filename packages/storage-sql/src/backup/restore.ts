import { CertwrightError } from '@certwright/core';
import { type Kysely, sql } from 'kysely';
import { MIGRATIONS, migrate } from '../migrations/index.js';
import type { Database, Flavor } from '../schema.js';
import { type BackupManifest, corrupt, decodeValue, readBackup } from './format.js';
import { type ColumnKind, describeTables } from './introspect.js';

/** Why a restore refused or rolled back, besides a damaged backup (`validation_failed`). */
export type RestoreRefusal =
  | 'target_not_empty'
  | 'schema_version'
  | 'schema_shape'
  | 'counts'
  | 'verification';

/** A `conflict` carrying why the restore refused, for surfaces that map it (exit codes). */
export const restoreRefused = (reason: RestoreRefusal, message: string, cause?: unknown): CertwrightError =>
  new CertwrightError('conflict', message, { extra: { restore: reason }, cause });

export function restoreRefusalOf(error: unknown): RestoreRefusal | undefined {
  if (!(error instanceof CertwrightError) || error.code !== 'conflict') return undefined;
  const reason = error.extra.restore;
  return typeof reason === 'string' ? (reason as RestoreRefusal) : undefined;
}

export interface RestoreOptions {
  /**
   * The manifest a caller already got from verifyBackup on the same bytes: the first pass is
   * skipped (the second still checks every digest as it reads, and rolls back on a mismatch).
   */
  checked?: BackupManifest;
  /**
   * Checks run inside the restore's transaction once every row is in, before it commits (the
   * audit chain, the keys): throwing rolls the whole restore back.
   */
  verify?: (trx: Kysely<Database>, manifest: BackupManifest) => Promise<void>;
}

export interface RestoreResult {
  manifest: BackupManifest;
  /** Rows per table as counted in the target after the restore. */
  counts: Record<string, number>;
}

/** The migration record is written by the target's own migrate(); the backup's must only agree. */
const MIGRATION_TABLE = 'cw_schema_migrations';
const BATCH_ROWS = 500;
const BATCH_BYTES = 4 * 1024 * 1024;

/** Reads a whole backup, checking it (format.ts), and returns its manifest. Writes nothing. */
export async function verifyBackup(source: AsyncIterable<Uint8Array>): Promise<BackupManifest> {
  let manifest: BackupManifest | undefined;
  for await (const event of readBackup(source)) if (event.type === 'manifest') manifest = event.manifest;
  if (!manifest) throw corrupt('it has no manifest');
  return manifest;
}

/**
 * Tables of the connected database that hold data: none for an empty database, and none for one
 * that only ran the migrations (they write nothing but their own record and an empty audit head)
 * — such as a target whose earlier restore was rolled back.
 */
export async function nonEmptyTables(db: Kysely<Database>, flavor: Flavor): Promise<string[]> {
  const out: string[] = [];
  for (const table of await describeTables(db, flavor)) {
    if (table.name === MIGRATION_TABLE) continue;
    const beyondMigrations = table.name === 'audit_head' ? sql`where last_seq <> 0` : sql``;
    const { rows } =
      await sql`select 1 as one from ${sql.table(table.name)} ${beyondMigrations} limit 1`.execute(db);
    if (rows.length > 0) out.push(table.name);
  }
  return out;
}

/** Refuses a backup of another schema version than this release's migrations make. */
export function checkSchemaVersion(manifest: BackupManifest): void {
  const ours = MIGRATIONS.map((m) => m.version);
  if (manifest.schema_versions.join(',') !== ours.join(',')) {
    throw restoreRefused(
      'schema_version',
      `the backup is of schema version ${manifest.schema_versions.at(-1)} (release ${manifest.release}); this release ` +
        `restores schema version ${ours.at(-1)}: restore it with release ${manifest.release}, then upgrade`,
    );
  }
}

/** Refuses a target that holds data (nonEmptyTables). */
export async function checkTargetEmpty(db: Kysely<Database>, flavor: Flavor): Promise<void> {
  const occupied = await nonEmptyTables(db, flavor);
  if (occupied.length > 0) {
    throw restoreRefused(
      'target_not_empty',
      `the target database is not empty (${occupied.slice(0, 5).join(', ')}${occupied.length > 5 ? ', …' : ''} hold rows): restore into an empty database`,
    );
  }
}

/**
 * Restores a backup into an empty database of any engine (docs/operations/backup.md). `open`
 * gives the backup's bytes from the start, and is called twice: the first pass checks the whole
 * file — format, every part's count and SHA-256, the manifest — before anything is written; the
 * second creates the schema (this release's migrations; the backup must be of the same schema
 * version) and inserts every row in ONE transaction, in the backup's order (parents before
 * children), checking the digests again as it reads. Then the row counts are compared with the
 * manifest and `verify` runs, still inside the transaction: any failure rolls every row back and
 * leaves the target empty again.
 */
export async function restoreBackup(
  db: Kysely<Database>,
  flavor: Flavor,
  open: () => AsyncIterable<Uint8Array>,
  options: RestoreOptions = {},
): Promise<RestoreResult> {
  const manifest = options.checked ?? (await verifyBackup(open()));
  checkSchemaVersion(manifest);
  await checkTargetEmpty(db, flavor);
  await migrate(db, flavor);
  // In reference order (describeTables): parents before children.
  const shapes = new Map((await describeTables(db, flavor)).map((t) => [t.name, t]));
  for (const part of manifest.parts) {
    if (!shapes.has(part.table))
      throw restoreRefused('schema_shape', `the target has no table ${part.table}`);
  }
  const counts = await db.transaction().execute(async (trx) => {
    const dyn = trx as unknown as Kysely<Record<string, Record<string, unknown>>>;
    // Rows some migrations create (the audit head, built-in roles …) make way for the backup's.
    for (const shape of [...shapes.values()].reverse()) {
      if (shape.name !== MIGRATION_TABLE) await dyn.deleteFrom(shape.name).execute();
    }
    let table: string | undefined;
    let columns: { name: string; kind: ColumnKind }[] = [];
    let batch: Record<string, unknown>[] = [];
    let batchBytes = 0;
    const flush = async () => {
      if (batch.length > 0 && table !== undefined) await dyn.insertInto(table).values(batch).execute();
      batch = [];
      batchBytes = 0;
    };
    for await (const event of readBackup(open())) {
      if (event.type === 'part') {
        const shape = shapes.get(event.table);
        if (!shape) throw restoreRefused('schema_shape', `the target has no table ${event.table}`);
        const targetKinds = new Map(shape.columns.map((c) => [c.name, c.kind]));
        if (event.columns.length !== shape.columns.length) {
          throw restoreRefused(
            'schema_shape',
            `table ${event.table} has other columns in the target than in the backup`,
          );
        }
        for (const [name, kind] of event.columns) {
          if (targetKinds.get(name) !== kind) {
            throw restoreRefused(
              'schema_shape',
              `column ${event.table}.${name} differs between the backup and the target`,
            );
          }
        }
        table = event.table;
        columns = event.columns.map(([name, kind]) => ({ name, kind }));
      } else if (event.type === 'row') {
        if (table === MIGRATION_TABLE) continue;
        const row: Record<string, unknown> = {};
        for (const [i, column] of columns.entries())
          row[column.name] = decodeValue(event.values[i], column.kind);
        batch.push(row);
        batchBytes += event.bytes;
        if (batch.length >= BATCH_ROWS || batchBytes >= BATCH_BYTES) await flush();
      } else if (event.type === 'end') {
        await flush();
        table = undefined;
      }
    }
    const counted: Record<string, number> = {};
    for (const part of manifest.parts) {
      const { rows } = await sql<{ n: unknown }>`select count(*) as n from ${sql.table(part.table)}`.execute(
        trx,
      );
      counted[part.table] = Number(rows[0]?.n ?? 0);
      if (counted[part.table] !== part.rows) {
        throw restoreRefused(
          'counts',
          `table ${part.table} holds ${counted[part.table]} rows after the restore, the backup ${part.rows}`,
        );
      }
    }
    await options.verify?.(trx, manifest);
    return counted;
  });
  return { manifest, counts };
}
