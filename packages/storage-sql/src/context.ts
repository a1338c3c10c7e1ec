import {
  type Clock,
  DEFAULT_PER_PAGE,
  MAX_PER_PAGE,
  type PageRequest,
  type SecretBox,
} from '@certwright/core';
import type { Kysely } from 'kysely';
import type { DeferredInserts } from './deferred-inserts.js';
import type { ChainKeyHolder } from './keyring.js';
import type { KnownAuditHead } from './repos/audit.js';
import type { Database, Flavor } from './schema.js';

/** What every repository works with; `db` is a transaction when `inTx` is true. */
export interface Ctx {
  db: Kysely<Database>;
  flavor: Flavor;
  box: SecretBox;
  /** The audit chain key once loaded (keyring.ts), shared by the storage's transactions. */
  chainKey: ChainKeyHolder;
  clock: Clock;
  inTx: boolean;
  /** Inside a transaction opened by `Storage.transaction`: callbacks to run once it commits. */
  afterCommit?: (() => unknown)[];
  /** Inside a transaction opened by `Storage.transaction`: deferred writes to run before it commits. */
  beforeCommit?: (() => Promise<void>)[];
  /** Inside a transaction opened by `Storage.transaction`: new certificates written together (deferred-inserts.ts). */
  deferred?: DeferredInserts;
  /** PostgreSQL/PGlite: the audit chain head this storage last committed (repos/audit.ts), shared by its transactions. */
  auditHead?: KnownAuditHead;
}

/** Runs `fn` atomically: joins the caller's transaction, or opens one. */
export function atomic<T>(ctx: Ctx, fn: (ctx: Ctx) => Promise<T>): Promise<T> {
  if (ctx.inTx) return fn(ctx);
  return ctx.db.transaction().execute((trx) => fn({ ...ctx, db: trx, inTx: true }));
}

/** Clamps a page request the way every list does: page ≥ 1, per_page 1–500, default 50. */
export function pageWindow(req: PageRequest | undefined): { limit: number; offset: number } {
  const page = Math.max(1, Math.floor(req?.page ?? 1));
  const per =
    req?.perPage === undefined
      ? DEFAULT_PER_PAGE
      : Math.min(MAX_PER_PAGE, Math.max(1, Math.floor(req.perPage)));
  return { limit: per, offset: (page - 1) * per };
}

export const toBool = (v: unknown): boolean => v === true || v === 1 || v === '1';
export const toNum = (v: unknown): number => (typeof v === 'number' ? v : Number(v));

export function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (text === null || text === undefined || text === '') return fallback;
  return JSON.parse(text) as T;
}

/** Escapes LIKE wildcards so user text matches literally (backslash is the default escape on both engines). */
export function likeContains(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
}

/** Removes keys whose value is undefined, so a patch never overwrites with NULL by accident. */
export function defined<T extends object>(obj: T): Partial<T> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export function count(row: { n?: unknown } | undefined): number {
  return row ? toNum(row.n) : 0;
}
