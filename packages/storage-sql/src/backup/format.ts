import { createHash, type Hash } from 'node:crypto';
import { CertwrightError } from '@certwright/core';
import type { ColumnKind } from './introspect.js';

/**
 * The backup file (docs/operations/backup.md): UTF-8 JSON lines, optionally gzip-compressed.
 *
 *   {"certwright_backup":1,"release":…,"created_at":…,"engine":…}           the header
 *   {"part":"owners","columns":[["id","text"],["created_at","ts"],…]}      a part: one table
 *   ["own-1","2026-01-01T00:00:00.000Z",…]                                 its rows, in key order
 *   {"end":"owners","rows":12,"sha256":"…"}                                its end
 *   …                                                                      every other table
 *   {"manifest":{…}}                                                       counts, digests, key ids
 *
 * A part's SHA-256 covers the bytes of its header line and of its row lines, newlines included.
 * The manifest comes last because a streamed backup knows its counts and digests only at the end.
 */
export const BACKUP_FORMAT = 1;

export interface BackupPart {
  table: string;
  rows: number;
  sha256: string;
}

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  /** The release that wrote it. */
  release: string;
  created_at: string;
  /** The engine it was taken from: pglite, postgres or mysql. */
  engine: string;
  /** The applied migrations (the schema version). */
  schema_versions: number[];
  /** The id of the key that sealed the backed-up instance's new secrets (never the key). */
  encryption_key_id: string;
  /** Every key the backup's secrets may be sealed under: a restore needs each in its keyring. */
  key_ids: string[];
  parts: BackupPart[];
}

export type BackupColumn = [name: string, kind: ColumnKind];

const KINDS: readonly ColumnKind[] = ['text', 'int', 'float', 'bool', 'ts', 'bytes'];
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,63}$/;
const ISO_TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?Z$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const KEY_ID = /^[0-9a-f]{16}$/;
/** The longest line a reader accepts: a row of several 16 MB text values at most. */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;
const MAX_PARTS = 1000;
const MAX_COLUMNS = 500;

export const corrupt = (message: string): CertwrightError =>
  new CertwrightError('validation_failed', `the backup is damaged or not a certwright backup: ${message}`);

/** A value as a backup line holds it. */
export function encodeValue(value: unknown, kind: ColumnKind): unknown {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case 'ts':
      return value instanceof Date ? value.toISOString() : new Date(String(value)).toISOString();
    case 'bytes':
      return Buffer.from(value as Uint8Array).toString('base64');
    case 'bool':
      return value === true || value === 1 || value === '1';
    case 'int':
      // pg returns bigint as text: kept as digits, not squeezed into a double.
      return typeof value === 'bigint' ? value.toString() : value;
    default:
      return value;
  }
}

/** A backup value as the database takes it (already checked by {@link checkValue}). */
export function decodeValue(value: unknown, kind: ColumnKind): unknown {
  if (value === null) return null;
  switch (kind) {
    case 'ts':
      return new Date(value as string);
    case 'bytes':
      return Buffer.from(value as string, 'base64');
    case 'bool':
      return value === true;
    default:
      return value;
  }
}

function checkValue(value: unknown, kind: ColumnKind): boolean {
  if (value === null) return true;
  switch (kind) {
    case 'text':
      return typeof value === 'string';
    case 'int':
      return (
        (typeof value === 'number' && Number.isSafeInteger(value)) ||
        (typeof value === 'string' && /^-?\d{1,20}$/.test(value))
      );
    case 'float':
      return typeof value === 'number' && Number.isFinite(value);
    case 'bool':
      return typeof value === 'boolean';
    case 'ts':
      return typeof value === 'string' && ISO_TS.test(value) && !Number.isNaN(Date.parse(value));
    case 'bytes':
      return typeof value === 'string' && value.length % 4 === 0 && BASE64.test(value);
  }
}

/** Splits a byte stream into lines (without the newline), refusing a line longer than `maxBytes`. */
export async function* lines(
  source: AsyncIterable<Uint8Array>,
  maxBytes = MAX_LINE_BYTES,
): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const piece of source) {
    const chunk = Buffer.isBuffer(piece) ? piece : Buffer.from(piece);
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline < 0) break;
      const tail = chunk.subarray(start, newline);
      if (pendingBytes + tail.length > maxBytes) throw corrupt(`a line is longer than ${maxBytes} bytes`);
      yield pending.length === 0 ? tail : Buffer.concat([...pending, tail]);
      pending = [];
      pendingBytes = 0;
      start = newline + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      pendingBytes += rest.length;
      if (pendingBytes > maxBytes) throw corrupt(`a line is longer than ${maxBytes} bytes`);
      // Copied: the source may reuse its buffer for the next chunk.
      pending.push(Buffer.from(rest));
    }
  }
  if (pendingBytes > 0) throw corrupt('it ends in the middle of a line');
}

export type BackupEvent =
  | { type: 'part'; table: string; columns: BackupColumn[] }
  | { type: 'row'; table: string; values: unknown[]; bytes: number }
  | { type: 'end'; table: string; rows: number }
  | { type: 'manifest'; manifest: BackupManifest };

function parseLine(line: Buffer, what: string): unknown {
  try {
    return JSON.parse(line.toString('utf8'));
  } catch {
    throw corrupt(`${what} is not JSON`);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Reads a backup, checking everything a restore relies on as it goes: the header, each part's
 * columns, every row's shape and value kinds, each part's row count and SHA-256 against its end
 * line, and at the end the manifest against the parts read (the same tables, counts and digests,
 * nothing after it). Every failure is a `validation_failed` error naming what is wrong; a restore
 * that consumes these events rolls back on it.
 */
export async function* readBackup(source: AsyncIterable<Uint8Array>): AsyncGenerator<BackupEvent> {
  const input = lines(source);
  const first = await input.next();
  if (first.done) throw corrupt('it is empty');
  const header = parseLine(first.value, 'the first line');
  if (!isObject(header) || header.certwright_backup !== BACKUP_FORMAT) {
    throw corrupt('the first line is not a certwright backup header of format 1');
  }
  const seen: BackupPart[] = [];
  let part: { table: string; columns: BackupColumn[]; rows: number; hash: Hash } | undefined;
  let manifest: BackupManifest | undefined;
  for await (const line of input) {
    if (manifest) throw corrupt('there is data after the manifest');
    if (part && line[0] === 0x5b /* [ */) {
      const values = parseLine(line, `a row of ${part.table}`);
      if (!Array.isArray(values) || values.length !== part.columns.length) {
        throw corrupt(`row ${part.rows + 1} of ${part.table} does not have ${part.columns.length} values`);
      }
      for (const [i, [name, kind]] of part.columns.entries()) {
        if (!checkValue(values[i], kind))
          throw corrupt(`row ${part.rows + 1} of ${part.table}: ${name} is not a valid ${kind}`);
      }
      part.hash.update(line).update('\n');
      part.rows += 1;
      yield { type: 'row', table: part.table, values, bytes: line.length };
      continue;
    }
    const record = parseLine(line, 'a line');
    if (!isObject(record)) throw corrupt('a line is neither a row nor a record');
    if (part) {
      if (record.end !== part.table) throw corrupt(`part ${part.table} has no end line`);
      const sha256 = part.hash.digest('hex');
      if (record.rows !== part.rows)
        throw corrupt(`part ${part.table} holds ${part.rows} rows, its end says ${String(record.rows)}`);
      if (record.sha256 !== sha256) throw corrupt(`part ${part.table} does not match its SHA-256`);
      seen.push({ table: part.table, rows: part.rows, sha256 });
      yield { type: 'end', table: part.table, rows: part.rows };
      part = undefined;
      continue;
    }
    if ('part' in record) {
      const table = record.part;
      const columns = record.columns;
      if (typeof table !== 'string' || !IDENTIFIER.test(table)) throw corrupt('a part names no valid table');
      if (seen.some((p) => p.table === table)) throw corrupt(`part ${table} appears twice`);
      if (seen.length >= MAX_PARTS) throw corrupt(`more than ${MAX_PARTS} parts`);
      if (!Array.isArray(columns) || columns.length === 0 || columns.length > MAX_COLUMNS) {
        throw corrupt(`part ${table} lists no valid columns`);
      }
      const names = new Set<string>();
      for (const column of columns) {
        if (
          !Array.isArray(column) ||
          column.length !== 2 ||
          typeof column[0] !== 'string' ||
          !IDENTIFIER.test(column[0]) ||
          names.has(column[0]) ||
          !KINDS.includes(column[1])
        ) {
          throw corrupt(`part ${table} has an invalid column`);
        }
        names.add(column[0]);
      }
      part = {
        table,
        columns: columns as BackupColumn[],
        rows: 0,
        hash: createHash('sha256').update(line).update('\n'),
      };
      yield { type: 'part', table, columns: part.columns };
      continue;
    }
    if ('manifest' in record) {
      manifest = checkManifest(record.manifest, seen);
      continue;
    }
    throw corrupt('a line is neither a part, a row, an end nor the manifest');
  }
  if (part) throw corrupt(`it ends inside part ${part.table}`);
  if (!manifest) throw corrupt('it has no manifest (an interrupted backup?)');
  yield { type: 'manifest', manifest };
}

function checkManifest(value: unknown, seen: BackupPart[]): BackupManifest {
  if (!isObject(value)) throw corrupt('the manifest is not an object');
  const m = value as Partial<BackupManifest>;
  const ok =
    m.format === BACKUP_FORMAT &&
    typeof m.release === 'string' &&
    typeof m.created_at === 'string' &&
    typeof m.engine === 'string' &&
    Array.isArray(m.schema_versions) &&
    m.schema_versions.every((v) => Number.isSafeInteger(v) && v > 0) &&
    typeof m.encryption_key_id === 'string' &&
    KEY_ID.test(m.encryption_key_id) &&
    Array.isArray(m.key_ids) &&
    m.key_ids.every((k) => typeof k === 'string' && KEY_ID.test(k)) &&
    Array.isArray(m.parts);
  if (!ok) throw corrupt('the manifest lacks a field or has one of the wrong type');
  const parts = m.parts as unknown[];
  if (parts.length !== seen.length)
    throw corrupt(`the manifest lists ${parts.length} parts, the backup holds ${seen.length}`);
  for (const [i, part] of parts.entries()) {
    const actual = seen[i] as BackupPart;
    if (
      !isObject(part) ||
      part.table !== actual.table ||
      part.rows !== actual.rows ||
      part.sha256 !== actual.sha256
    ) {
      throw corrupt(`the manifest does not match part ${actual.table}`);
    }
  }
  return m as BackupManifest;
}
