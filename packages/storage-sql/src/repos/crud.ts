/**
 * The mechanics every id-keyed repository repeats. Each repository still spells out its own
 * typed methods (what a record is, which columns a patch may touch, how a list is filtered and
 * ordered); these helpers only carry the steps that must behave the same everywhere: a missing
 * id is always `notFound`, an update always stamps `updated_at`, and a page's `total` always
 * counts exactly the rows its filter admits.
 */
import { CertwrightError, notFound, type PageRequest, type PageResult } from '@certwright/core';
import type { SelectQueryBuilder, UpdateObject } from 'kysely';
import { type Ctx, count, pageWindow } from '../context.js';
import type { Database } from '../schema.js';

type TablesWith<Columns> = {
  [T in keyof Database]: Database[T] extends Columns ? T : never;
}[keyof Database];

/** Tables whose rows are addressed by a string `id`. */
export type IdTable = TablesWith<{ id: string }>;
/** Id-keyed tables that record when a row last changed. */
export type StampedTable = TablesWith<{ id: string; updated_at: Date }>;
/** Tables whose rows carry a `status`. */
type StatusTable = TablesWith<{ status: string }>;

/** Rows of `table` per status in one GROUP BY; every status of `statuses` present, 0 when none. */
export async function countByStatus<S extends string>(
  ctx: Ctx,
  table: StatusTable,
  statuses: readonly S[],
): Promise<Record<S, number>> {
  // Any status table: typed as one of them, since only `status` is read.
  const rows = await ctx.db
    .selectFrom(table as 'jobs')
    .select(['status', (eb) => eb.fn.countAll().as('n')])
    .groupBy('status')
    .execute();
  const out = Object.fromEntries(statuses.map((s) => [s, 0])) as Record<S, number>;
  for (const r of rows) if (r.status in out) out[r.status as S] = count(r);
  return out;
}

/** Turns a `get` into the port's `require`: the same lookup, but a missing id is `notFound(what, id)`. */
export function requireFound<T>(
  what: string,
  get: (id: string) => Promise<T | null>,
): (id: string) => Promise<T> {
  return async (id) => {
    const found = await get(id);
    if (!found) throw notFound(what, id);
    return found;
  };
}

/**
 * Turns a locking read into the port's `lockForUpdate`: refused outside a transaction (a lock
 * that ends with its statement protects nothing), and a missing id is `notFound(what, id)`.
 * `readLocked` must read with `SELECT … FOR UPDATE`: a locking read returns the row's latest
 * committed version on every engine, even where plain reads use an older snapshot (MySQL's
 * REPEATABLE READ), and it writes nothing, so `updated_at` stays as it was.
 */
export function lockFound<T>(
  ctx: Ctx,
  what: string,
  readLocked: (id: string) => Promise<T | null>,
): (id: string) => Promise<T> {
  return async (id) => {
    if (!ctx.inTx) {
      throw new CertwrightError(
        'internal',
        `lockForUpdate of ${what} '${id}' called outside a transaction; call it on the tx of storage.transaction()`,
      );
    }
    const found = await readLocked(id);
    if (!found) throw notFound(what, id);
    return found;
  };
}

/** Writes `values` to row `id` and stamps `updated_at`; callers check the row exists first. */
export async function updateById<T extends StampedTable>(
  ctx: Ctx,
  table: T,
  id: string,
  values: UpdateObject<Database, T>,
): Promise<void> {
  // Kysely cannot resolve columns through a generic table name, but it can through the union
  // of stamped tables, every one of which has `id` and `updated_at`.
  const stamped: StampedTable = table;
  await ctx.db
    .updateTable(stamped)
    .set({ ...values, updated_at: ctx.clock.now() })
    .where('id', '=', id)
    .execute();
}

/** Deletes row `id`; deleting nothing is `notFound(what, id)` rather than a silent success. */
export async function deleteById(ctx: Ctx, table: IdTable, id: string, what: string): Promise<void> {
  const res = await ctx.db.deleteFrom(table).where('id', '=', id).executeTakeFirst();
  if (Number(res.numDeletedRows) === 0) throw notFound(what, id);
}

/**
 * One page of `filtered`: `total` counts every row the filter admits, `items` are the rows
 * `select` picks and orders (it should end on a unique column so pages never overlap),
 * cut to the requested window.
 */
export function listPage<TB extends keyof Database, O>(
  filtered: SelectQueryBuilder<Database, TB, object>,
  request: PageRequest,
  select: (q: SelectQueryBuilder<Database, TB, object>) => SelectQueryBuilder<Database, TB, O>,
): Promise<PageResult<O>>;
export function listPage<TB extends keyof Database, O, Item>(
  filtered: SelectQueryBuilder<Database, TB, object>,
  request: PageRequest,
  select: (q: SelectQueryBuilder<Database, TB, object>) => SelectQueryBuilder<Database, TB, O>,
  toItem: (row: O) => Item,
): Promise<PageResult<Item>>;
export async function listPage<TB extends keyof Database, O, Item>(
  filtered: SelectQueryBuilder<Database, TB, object>,
  request: PageRequest,
  select: (q: SelectQueryBuilder<Database, TB, object>) => SelectQueryBuilder<Database, TB, O>,
  toItem?: (row: O) => Item,
): Promise<PageResult<O | Item>> {
  const { limit, offset } = pageWindow(request);
  const rows = (await select(filtered).limit(limit).offset(offset).execute()) as O[];
  const items = toItem ? rows.map(toItem) : rows;
  // A short page that starts at or before the last row is the end of the list: the total is
  // known without counting (most lists the services read whole — rules, policies — end on page 1).
  if (rows.length < limit && (rows.length > 0 || offset === 0)) return { items, total: offset + rows.length };
  const total = await filtered.select((eb) => eb.fn.countAll().as('n')).executeTakeFirst();
  return { items, total: count(total) };
}
