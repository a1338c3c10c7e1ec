import { createHash } from 'node:crypto';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database, Flavor } from '../schema.js';
import { BACKUP_FORMAT, type BackupManifest, type BackupPart, encodeValue } from './format.js';
import { describeTables, type TableShape } from './introspect.js';

/** Where backup bytes go; `write` resolves once the sink can take more (back-pressure). */
export interface BackupSink {
  write(text: string): Promise<void>;
}

export interface BackupMeta {
  release: string;
  engine: string;
  encryptionKeyId: string;
  keyIds: string[];
}

/** Rows per query: one page of a table read in key order. */
const PAGE_ROWS = 1000;
/** Text handed to the sink at once: fewer, larger writes. */
const FLUSH_CHARS = 256 * 1024;

/**
 * Writes a backup of every table (format.ts) to `sink` from ONE repeatable-read transaction, so the
 * backup is one consistent view of the database however long it takes and whatever is written
 * meanwhile. Each table is read a page at a time in primary-key order (keyset pagination), so
 * memory stays bounded by a page and the sink's buffer. Returns the manifest it wrote last.
 */
export async function writeBackup(
  db: Kysely<Database>,
  flavor: Flavor,
  sink: BackupSink,
  meta: BackupMeta,
): Promise<BackupManifest> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const created_at = new Date().toISOString();
      let buffered = '';
      const emit = async (line: string) => {
        buffered += `${line}\n`;
        if (buffered.length >= FLUSH_CHARS) {
          const out = buffered;
          buffered = '';
          await sink.write(out);
        }
      };
      await emit(
        JSON.stringify({
          certwright_backup: BACKUP_FORMAT,
          release: meta.release,
          created_at,
          engine: meta.engine,
        }),
      );
      const tables = await describeTables(trx, flavor);
      const parts: BackupPart[] = [];
      for (const table of tables) parts.push(await writeTable(trx, table, emit));
      const versions = await trx
        .selectFrom('cw_schema_migrations')
        .select('version')
        .orderBy('version')
        .execute();
      const manifest: BackupManifest = {
        format: BACKUP_FORMAT,
        release: meta.release,
        created_at,
        engine: meta.engine,
        schema_versions: versions.map((v) => Number(v.version)),
        encryption_key_id: meta.encryptionKeyId,
        key_ids: [...new Set(meta.keyIds)].sort(),
        parts,
      };
      await emit(JSON.stringify({ manifest }));
      if (buffered) await sink.write(buffered);
      return manifest;
    });
}

async function writeTable(
  db: Kysely<Database>,
  table: TableShape,
  emit: (line: string) => Promise<void>,
): Promise<BackupPart> {
  if (table.key.length === 0) throw new Error(`table ${table.name} has no primary key to read it in order`);
  const hash = createHash('sha256');
  const line = async (text: string) => {
    hash.update(text).update('\n');
    await emit(text);
  };
  await line(JSON.stringify({ part: table.name, columns: table.columns.map((c) => [c.name, c.kind]) }));
  const select = sql.join(table.columns.map((c) => sql.ref(c.name)));
  const order = sql.join(table.key.map((k) => sql.ref(k)));
  const keyTuple = sql`(${order})`;
  let after: unknown[] | undefined;
  let rows = 0;
  for (;;) {
    const where: RawBuilder<unknown> = after
      ? sql`where ${keyTuple} > (${sql.join(after.map((v) => sql`${v}`))})`
      : sql``;
    const page = await sql<Record<string, unknown>>`
      select ${select} from ${sql.table(table.name)} ${where} order by ${order} limit ${sql.lit(PAGE_ROWS)}`.execute(
      db,
    );
    for (const row of page.rows) {
      await line(JSON.stringify(table.columns.map((c) => encodeValue(row[c.name], c.kind))));
    }
    rows += page.rows.length;
    if (page.rows.length < PAGE_ROWS) break;
    const last = page.rows[page.rows.length - 1] as Record<string, unknown>;
    after = table.key.map((k) => last[k]);
  }
  const sha256 = hash.digest('hex');
  await emit(JSON.stringify({ end: table.name, rows, sha256 }));
  return { table: table.name, rows, sha256 };
}
