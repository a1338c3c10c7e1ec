import type { SecretBox, Storage } from '@certwright/core';
import type { Kysely } from 'kysely';
import {
  KEY_ROW_PREFIX,
  REKEY_PROGRESS_NAME,
  readKeyring,
  SEALED_FORMAT_NAME,
  writeKeyring,
} from './keyring.js';
import type { Database, Flavor } from './schema.js';
import { SEALED_TABLES, type SealedTable } from './sealed-columns.js';

/** A value no key of the ring opens: left as it is, named by table, row and column (never the value). */
export interface RekeyFailure {
  table: string;
  key: string;
  column: string;
}

/** Stored in `cw_keyring` after every batch, in the batch's transaction: a restart resumes from it. */
export interface RekeyProgress {
  /** The key the values are re-sealed under; a run for another key starts over. */
  key_id: string;
  started_at: string;
  /** Values not yet under `key_id` when the run began. */
  total: number;
  resealed: number;
  /** Position: the index in the sealed tables and the last primary key done in it. */
  table: number;
  after: string | null;
  /** Passes over the tables: another one follows when values sealed meanwhile under another key remain. */
  pass: number;
  failures: RekeyFailure[];
  finished_at: string | null;
}

export interface RekeyOptions {
  /** Rows per transaction (default 500). */
  batchSize?: number;
  /** Stop after this many batches and resume on the next call (the background job's tick). */
  maxBatches?: number;
  /** Called after every batch with the stored progress. */
  onProgress?: (progress: Readonly<RekeyProgress>) => void;
  /** Who runs it, for the audit trail (`rekey-command`, `rekey-job`). */
  actor?: string;
}

export interface RekeyResult {
  progress: RekeyProgress;
  /** Every sealed value is under the current key; the other keys' rows are retired. */
  finished: boolean;
  /** The key ids this call retired (finished only). */
  retiredKeyIds: string[];
}

/**
 * Passes one call makes at most: values still appearing under another key after that many mean an
 * instance seals with an old key; the next call tries again.
 */
const MAX_PASSES = 5;
const MAX_LISTED_FAILURES = 100;

interface RekeyContext {
  db: Kysely<Database>;
  flavor: Flavor;
  box: SecretBox;
  storage: Storage;
}

/**
 * Re-seals every sealed value (sealed-columns.ts) under the ring's current key in the `v2.` format,
 * in batches of one transaction each that lock their rows, re-seal them and store the progress,
 * so a run stopped anywhere (a crash, a restart, `maxBatches`) resumes where it was. Values already
 * under the current key are skipped by the query itself. After the last table a count over every
 * column makes sure nothing was sealed meanwhile under another key (an instance not yet restarted
 * with the new key); if something was, another pass follows. When none remains the run finishes:
 * the key-check rows of the other keys are removed (a start without them is allowed from then on),
 * the database records the `v2.` format, and the trail gets `encryption_key_rekeyed`.
 */
export async function runRekey(c: RekeyContext, options: RekeyOptions = {}): Promise<RekeyResult> {
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? 500));
  const actor = options.actor ?? 'rekey';
  const keyId = c.box.keyId;
  let progress = await readProgress(c.db);
  if (progress?.key_id === keyId && progress.finished_at !== null) {
    return { progress, finished: true, retiredKeyIds: [] };
  }
  if (progress?.key_id !== keyId) {
    const total = await countRemaining(c.db, keyId);
    progress = {
      key_id: keyId,
      started_at: new Date().toISOString(),
      total,
      resealed: 0,
      table: 0,
      after: null,
      pass: 1,
      failures: [],
      finished_at: null,
    };
    // Recorded before the progress: a crash in between repeats the event rather than lose it.
    await c.storage.audit.append({
      actor,
      actor_type: 'system',
      action: 'encryption_key_rekey_start',
      resource_type: 'encryption_key',
      resource_id: keyId,
      category: 'config',
      details: { key_id: keyId, previous_key_ids: [...c.box.previousKeyIds], to_reseal: total },
    });
    await writeKeyring(c.db, c.flavor, REKEY_PROGRESS_NAME, JSON.stringify(progress));
  }
  let batches = 0;
  let passes = 1;
  for (;;) {
    if (progress.table >= SEALED_TABLES.length) {
      const remaining = await countRemaining(c.db, keyId);
      if (remaining > progress.failures.length && passes < MAX_PASSES) {
        passes += 1;
        progress = { ...progress, table: 0, after: null, pass: progress.pass + 1, failures: [] };
        await writeKeyring(c.db, c.flavor, REKEY_PROGRESS_NAME, JSON.stringify(progress));
        continue;
      }
      if (remaining > 0) return { progress, finished: false, retiredKeyIds: [] };
      return finish(c, progress, actor);
    }
    if (options.maxBatches !== undefined && batches >= options.maxBatches) {
      return { progress, finished: false, retiredKeyIds: [] };
    }
    progress = await batch(c, progress, batchSize);
    batches += 1;
    options.onProgress?.(progress);
  }
}

async function batch(c: RekeyContext, start: RekeyProgress, batchSize: number): Promise<RekeyProgress> {
  const spec = SEALED_TABLES[start.table] as SealedTable;
  return c.db.transaction().execute(async (trx) => {
    const db = trx as unknown as Kysely<Record<string, Record<string, unknown>>>;
    const columns = spec.columns.map((col) => col.column);
    let query = db
      .selectFrom(spec.table)
      .select([spec.key, ...(spec.select ?? []), ...columns])
      .where((eb) => eb.or(columns.map((col) => notUnder(eb, col, start.key_id))));
    if (spec.only !== undefined) query = query.where(spec.key, '=', spec.only);
    if (start.after !== null) query = query.where(spec.key, '>', start.after);
    const rows = await query.orderBy(spec.key).limit(batchSize).forUpdate().execute();
    let resealed = 0;
    const failures = [...start.failures];
    for (const row of rows) {
      const set: Record<string, string> = {};
      for (const col of spec.columns) {
        const value = row[col.column];
        if (typeof value !== 'string' || c.box.isCurrent(value)) continue;
        try {
          set[col.column] = await c.box.reseal(value, col.context(row));
        } catch {
          if (failures.length < MAX_LISTED_FAILURES) {
            failures.push({ table: spec.table, key: String(row[spec.key]), column: col.column });
          }
        }
      }
      if (Object.keys(set).length === 0) continue;
      await db.updateTable(spec.table).set(set).where(spec.key, '=', row[spec.key]).execute();
      resealed += Object.keys(set).length;
    }
    const done = rows.length < batchSize;
    const next: RekeyProgress = {
      ...start,
      resealed: start.resealed + resealed,
      failures,
      table: done ? start.table + 1 : start.table,
      after: done ? null : String(rows[rows.length - 1]?.[spec.key]),
    };
    await writeKeyring(trx, c.flavor, REKEY_PROGRESS_NAME, JSON.stringify(next));
    return next;
  });
}

async function finish(c: RekeyContext, progress: RekeyProgress, actor: string): Promise<RekeyResult> {
  const keyId = progress.key_id;
  const finished: RekeyProgress = { ...progress, finished_at: new Date().toISOString() };
  const retiredKeyIds = await c.db.transaction().execute(async (trx) => {
    const rows = await trx
      .selectFrom('cw_key_check')
      .select('id')
      .where('id', 'like', `${KEY_ROW_PREFIX}%`)
      .where('id', '!=', `${KEY_ROW_PREFIX}${keyId}`)
      .forUpdate()
      .execute();
    if (rows.length > 0) {
      await trx
        .deleteFrom('cw_key_check')
        .where(
          'id',
          'in',
          rows.map((r) => r.id),
        )
        .execute();
    }
    await writeKeyring(trx, c.flavor, SEALED_FORMAT_NAME, '2');
    await writeKeyring(trx, c.flavor, REKEY_PROGRESS_NAME, JSON.stringify(finished));
    return rows.map((r) => r.id.slice(KEY_ROW_PREFIX.length));
  });
  c.box.sealWithKeyIds();
  await c.storage.audit.append({
    actor,
    actor_type: 'system',
    action: 'encryption_key_rekeyed',
    resource_type: 'encryption_key',
    resource_id: keyId,
    category: 'config',
    details: {
      key_id: keyId,
      resealed: finished.resealed,
      passes: finished.pass,
      retired_key_ids: retiredKeyIds,
    },
  });
  return { progress: finished, finished: true, retiredKeyIds };
}

/** The stored progress; undefined before the first run. */
export async function readProgress(db: Kysely<Database>): Promise<RekeyProgress | undefined> {
  const text = await readKeyring(db, REKEY_PROGRESS_NAME);
  return text === undefined ? undefined : (JSON.parse(text) as RekeyProgress);
}

/** Values in every sealed column that are not under `keyId` in the `v2.` format. */
export async function countRemaining(db: Kysely<Database>, keyId: string): Promise<number> {
  const dyn = db as unknown as Kysely<Record<string, Record<string, unknown>>>;
  let total = 0;
  for (const spec of SEALED_TABLES) {
    for (const col of spec.columns) {
      let query = dyn
        .selectFrom(spec.table)
        .select((eb) => eb.fn.countAll().as('n'))
        .where((eb) => notUnder(eb, col.column, keyId));
      if (spec.only !== undefined) query = query.where(spec.key, '=', spec.only);
      const row = await query.executeTakeFirst();
      total += Number(row?.n ?? 0);
    }
  }
  return total;
}

// biome-ignore lint/suspicious/noExplicitAny: the tables are addressed by name from SEALED_TABLES
function notUnder(eb: any, column: string, keyId: string) {
  // Key ids are hex digits, so the pattern holds no LIKE wildcard but its trailing %.
  return eb.and([eb(column, 'is not', null), eb(column, 'not like', `v2.${keyId}.%`)]);
}
