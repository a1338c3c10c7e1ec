import {
  type ActorType,
  AUDIT_GENESIS_HASH,
  type AuditCategory,
  type AuditChainKey,
  type AuditEvent,
  type AuditHead,
  type AuditRepository,
  auditHeadMessage,
  computeAuditHash,
  computeAuditHeadMac,
  fail,
  isCertwrightError,
  type NewAuditEvent,
  newId,
  type SecretBox,
  verifyAuditChain,
} from '@certwright/core';
import { type Insertable, type Kysely, type QueryCreator, type Selectable, sql } from 'kysely';
import { atomic, type Ctx, count, pageWindow, parseJson, toNum } from '../context.js';
import { chainKeyOf, loadAuditChainKey } from '../keyring.js';
import type { AuditEventsTable, AuditHeadTable, Database } from '../schema.js';

function toHead(r: Selectable<AuditHeadTable>): AuditHead {
  return {
    seq: toNum(r.last_seq),
    hash: r.last_hash,
    keyed_from_seq: toNum(r.keyed_from_seq),
    mac: r.head_mac,
  };
}

/**
 * The head row. Migrations create it and nothing deletes it, so a missing row is a database
 * someone changed: appends fail closed with their own reason (no event can be chained without
 * it), and verification reports it as a broken trail.
 */
async function readHead(db: Kysely<Database>, lock = false): Promise<AuditHead> {
  let q = db.selectFrom('audit_head').selectAll().where('id', '=', 1);
  if (lock) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  if (!row) {
    throw fail(
      'audit_head_missing',
      "the audit trail's stored head is missing from the database: audited changes are refused until it is restored (docs/api/audit.md)",
    );
  }
  return toHead(row);
}

/** The head, or null when its row is missing. */
async function readHeadIfStored(db: Kysely<Database>): Promise<AuditHead | null> {
  try {
    return await readHead(db);
  } catch (error) {
    if (isCertwrightError(error) && error.reason === 'audit_head_missing') return null;
    throw error;
  }
}

/** The newest stored event's seq, 0 when there is none. */
async function newestSeq(db: Kysely<Database>): Promise<number> {
  const newest = await db
    .selectFrom('audit_events')
    .select((eb) => eb.fn.max('seq').as('n'))
    .executeTakeFirst();
  return count(newest);
}

/**
 * Authenticates the head under the chain key. Runs only in the start that applied migration 6
 * (under the migration lock): sealing whatever head it finds at any later start would bless a
 * head someone rewrote in the database meanwhile.
 */
export async function sealAuditHead(db: Kysely<Database>, box: SecretBox): Promise<void> {
  const head = await readHead(db);
  await db
    .updateTable('audit_head')
    .set({ head_mac: await computeAuditHeadMac(head, await loadAuditChainKey(db, box)) })
    .where('id', '=', 1)
    .execute();
}

/** The events up to `seq`: a verification ignores what was appended after it read the head. */
async function* through(events: AsyncIterable<AuditEvent>, seq: number): AsyncIterable<AuditEvent> {
  for await (const event of events) {
    if (event.seq > seq) return;
    yield event;
  }
}

function toEvent(r: Selectable<AuditEventsTable>): AuditEvent {
  return {
    id: r.id,
    seq: toNum(r.seq),
    actor: r.actor,
    actor_type: r.actor_type as ActorType,
    action: r.action,
    resource_type: r.resource_type,
    resource_id: r.resource_id,
    category: r.category as AuditCategory,
    details: parseJson(r.details, {}),
    occurred_at: r.occurred_at,
    prev_hash: r.prev_hash,
    hash: r.hash,
  };
}

/** Events per insert statement (12 parameters each, well within every engine's limit). */
const FLUSH_ROWS = 500;

type EventRow = Insertable<AuditEventsTable>;
type Waiting = ReturnType<NonNullable<Ctx['deferred']>['take']>;
/** An event chained but not yet written, with the row it is stored as. */
interface Pending {
  event: AuditEvent;
  row: EventRow;
}

const EVENT_COLUMNS = [
  'id',
  'seq',
  'actor',
  'actor_type',
  'action',
  'resource_type',
  'resource_id',
  'category',
  'details',
  'occurred_at',
  'prev_hash',
  'hash',
] as const;

/** Writes events and moves the head past the last of them. */
async function writeEvents(
  c: Ctx,
  rows: EventRow[],
  moved: { last_seq: number; last_hash: string; head_mac: string | null },
  waiting: Waiting = null,
): Promise<void> {
  if (c.flavor === 'postgres') {
    // One statement: the certificates waiting in the transaction (if handed over), the events
    // and the head they lead to, through a data-modifying WITH.
    await withWaiting(c.db, waiting)
      .with('appended', (db) => db.insertInto('audit_events').values(rows))
      .updateTable('audit_head')
      .set(moved)
      .where('id', '=', 1)
      .execute();
  } else {
    await c.db.insertInto('audit_events').values(rows).execute();
    await c.db.updateTable('audit_head').set(moved).where('id', '=', 1).execute();
  }
}

/** The certificates and versions waiting in the transaction (deferred-inserts.ts), ahead of a statement. */
function withWaiting(db: Kysely<Database>, waiting: Waiting): QueryCreator<Database> {
  if (!waiting) return db;
  // The WITH names add nothing the statement reads: typed as the plain database.
  return db
    .with('created', (d) => d.insertInto('certificates').values(waiting.certificates))
    .with('created_versions', (d) =>
      d.insertInto('certificate_versions').values(waiting.versions),
    ) as unknown as QueryCreator<Database>;
}

/**
 * PostgreSQL/PGlite: appends `rows`, chained onto `base` without having read or locked the head,
 * in ONE statement that moves the head to `next` only where it is still exactly `base` and
 * inserts the events only when it did. False when the head had moved (another instance or
 * transaction appended since): nothing of the events is written, and the caller appends again
 * under the head's lock. A concurrent appender holding the head's row lock makes this statement
 * wait for its end, and PostgreSQL then checks the condition against the row it committed, so
 * two appenders can never both extend one head.
 */
async function writeOnHead(
  c: Ctx,
  base: AuditHead,
  rows: EventRow[],
  next: AuditHead,
  waiting: Waiting = null,
): Promise<boolean> {
  const columns = sql.join(EVENT_COLUMNS.map((name) => sql.ref(name)));
  // One parameter for all rows, typed by the table's own row type: the statement's text does
  // not depend on how many events a group commit appends.
  const events = JSON.stringify(rows);
  const moved = await withWaiting(c.db, waiting)
    .with('moved', (db) =>
      db
        .updateTable('audit_head')
        .set({ last_seq: next.seq, last_hash: next.hash, head_mac: next.mac })
        .where('id', '=', 1)
        .where('last_seq', '=', base.seq)
        .where('last_hash', '=', base.hash)
        .where('keyed_from_seq', '=', base.keyed_from_seq)
        .where('head_mac', '=', base.mac)
        .returning('id'),
    )
    .with('appended', (db) =>
      db
        .insertInto('audit_events')
        .columns(EVENT_COLUMNS)
        .expression(
          sql`select ${columns} from json_populate_recordset(null::audit_events, ${events}::json) where exists (select 1 from moved)`,
        ),
    )
    .selectFrom('moved')
    .select('id')
    .execute();
  return moved.length === 1;
}

/**
 * The head a storage last committed itself (PostgreSQL/PGlite), shared by its transactions: an
 * append chains onto it without reading or locking the head and writes with `writeOnHead`, one
 * statement, falling back to the locked read when another instance appended since. Only a
 * sealed head this storage wrote is kept, and only once its transaction committed.
 */
export interface KnownAuditHead {
  last: AuditHead | null;
}

/** Chains `input` onto `head`; `trusted`: the head's MAC is this storage's own, not checked again. */
async function link(
  c: Ctx,
  key: AuditChainKey,
  head: AuditHead,
  trusted: boolean,
  input: NewAuditEvent,
): Promise<{ event: AuditEvent; row: EventRow; next: AuditHead }> {
  const base = {
    id: newId('audit'),
    seq: head.seq + 1,
    actor: input.actor,
    actor_type: input.actor_type,
    action: input.action,
    resource_type: input.resource_type,
    resource_id: input.resource_id,
    category: input.category,
    // Stored with millisecond precision, so hash exactly what will be read back.
    occurred_at: new Date(Math.floor((input.occurred_at ?? c.clock.now()).getTime())),
    prev_hash: head.hash,
  };
  // Details round-trip through JSON; hash the stored form so verification agrees.
  const details = JSON.parse(JSON.stringify(input.details ?? {})) as Record<string, unknown>;
  const event: AuditEvent = { ...base, details, hash: await computeAuditHash({ ...base, details }, key) };
  const moved = { seq: event.seq, hash: event.hash, keyed_from_seq: head.keyed_from_seq };
  // A head that does not verify (rewritten in the database) is extended unsealed: sealing it
  // here would bless the rewrite, so verification keeps reporting it.
  const sealed = head.mac !== null && (trusted || (await key.verify(auditHeadMessage(head), head.mac)));
  const mac = sealed ? await computeAuditHeadMac(moved, key) : null;
  return { event, row: { ...event, details: JSON.stringify(details) }, next: { ...moved, mac } };
}

/**
 * Chains `pending` again onto `head` (read under its lock after `writeOnHead` found it moved):
 * new seq, prev_hash and hash for each, set in place so that the events their appends returned
 * hold what is stored. Returns the head the last of them leads to.
 */
async function relink(key: AuditChainKey, head: AuditHead, pending: Pending[]): Promise<AuditHead> {
  const sealed = head.mac !== null && (await key.verify(auditHeadMessage(head), head.mac));
  let prev = { seq: head.seq, hash: head.hash };
  for (const { event, row } of pending) {
    event.seq = prev.seq + 1;
    event.prev_hash = prev.hash;
    const { hash: _, ...unhashed } = event;
    event.hash = await computeAuditHash(unhashed, key);
    row.seq = event.seq;
    row.prev_hash = event.prev_hash;
    row.hash = event.hash;
    prev = { seq: event.seq, hash: event.hash };
  }
  const moved = { ...prev, keyed_from_seq: head.keyed_from_seq };
  return { ...moved, mac: sealed ? await computeAuditHeadMac(moved, key) : null };
}

/** The storage's audit chain key (keyring.ts): stored in the database, outliving a key rotation. */
const chainKey = (ctx: Ctx) => chainKeyOf(ctx.chainKey, ctx.db, ctx.box);

export function auditRepository(ctx: Ctx): AuditRepository {
  /** Where the storage keeps the head it last committed (PostgreSQL/PGlite only). */
  const known = ctx.flavor === 'postgres' ? ctx.auditHead : undefined;
  /**
   * Inside a transaction, the head this transaction's last append leads to: once written, the
   * head row stays locked until the transaction ends, so it is still the head, and a second
   * append in the same transaction (a group commit of several issuances) neither reads nor
   * verifies it again.
   */
  let written: AuditHead | undefined;
  /**
   * The head the pending events were chained onto without reading it (the storage's known head),
   * until `flush` wrote them on it or, had it moved, chained them again under its lock.
   */
  let assumed: AuditHead | undefined;
  /**
   * Inside `Storage.transaction`, appended events wait here and are written together, with the
   * head they lead to, just before the commit (or before anything in the transaction reads the
   * trail): one insert for many events of a group commit. The head row is locked by the first
   * append when it reads the head, otherwise by the write itself, which moves the head only
   * from the head the events were chained onto; the events commit with what they record.
   */
  let pending: Pending[] = [];
  const deferred = ctx.beforeCommit !== undefined;
  /** The certificates waiting in the transaction, to ride on the events' statement where they can. */
  async function waitingCertificates(): Promise<Waiting> {
    if (!ctx.deferred?.pending) return null;
    const waiting = ctx.deferred.take();
    if (!waiting) await ctx.deferred.flush();
    return waiting;
  }
  async function flush(): Promise<void> {
    if (pending.length === 0 || !written) return;
    if (assumed) {
      const base = assumed;
      assumed = undefined;
      const rows = pending.map((p) => p.row);
      if (
        rows.length <= FLUSH_ROWS &&
        (await writeOnHead(ctx, base, rows, written, await waitingCertificates()))
      ) {
        pending = [];
        return;
      }
      // The head moved since this storage last wrote it: chain the events onto it under its lock.
      written = await relink(await chainKey(ctx), await readHead(ctx.db, true), pending);
    }
    const rows = pending.map((p) => p.row);
    pending = [];
    const moved = { last_seq: written.seq, last_hash: written.hash, head_mac: written.mac };
    const waiting = await waitingCertificates();
    for (let i = 0; i < rows.length; i += FLUSH_ROWS) {
      const chunk = rows.slice(i, i + FLUSH_ROWS);
      if (i + FLUSH_ROWS < rows.length) await ctx.db.insertInto('audit_events').values(chunk).execute();
      else await writeEvents(ctx, chunk, moved, waiting);
    }
  }
  if (deferred) {
    ctx.beforeCommit!.push(flush);
    // Committed: the head this transaction wrote is the storage's known head.
    if (known) ctx.afterCommit!.push(() => remember(written));
  }
  function remember(head: AuditHead | undefined): void {
    if (known && head && head.mac !== null) known.last = head;
  }
  const repository: AuditRepository = {
    async append(input) {
      const key = await chainKey(ctx);
      if (deferred) {
        let head = written;
        if (!head && known?.last) head = assumed = known.last;
        // Otherwise the head row lock serializes appends on every engine: a second appender
        // waits here and then reads the head the first one wrote, so the chain cannot fork.
        head ??= await readHead(ctx.db, true);
        const { event, row, next } = await link(ctx, key, head, head === written || head === assumed, input);
        pending.push({ event, row });
        written = next;
        if (pending.length >= FLUSH_ROWS) await flush();
        return event;
      }
      if (!ctx.inTx && known?.last) {
        // One statement on the head this storage last wrote; under the lock below if it moved.
        const base = known.last;
        const { event, row, next } = await link(ctx, key, base, true, input);
        if (await writeOnHead(ctx, base, [row], next)) {
          remember(next);
          return event;
        }
      }
      const appended = await atomic(ctx, async (c) => {
        const head = written ?? (await readHead(c.db, true));
        const linked = await link(c, key, head, head === written, input);
        const { next } = linked;
        await writeEvents(c, [linked.row], { last_seq: next.seq, last_hash: next.hash, head_mac: next.mac });
        if (ctx.inTx) written = next;
        return linked;
      });
      if (!ctx.inTx) remember(appended.next);
      return appended.event;
    },

    async *stream(query = {}) {
      await flush();
      const pageSize = Math.max(1, Math.floor(query.pageSize ?? 1000));
      let remaining = query.limit ?? Number.POSITIVE_INFINITY;
      let after = query.afterSeq ?? 0;
      while (remaining > 0) {
        let q = ctx.db.selectFrom('audit_events').selectAll().where('seq', '>', after);
        if (query.from) q = q.where('occurred_at', '>=', query.from);
        if (query.to) q = q.where('occurred_at', '<', query.to);
        if (query.category) q = q.where('category', '=', query.category);
        const rows = await q.orderBy('seq').limit(Math.min(pageSize, remaining)).execute();
        for (const r of rows) yield toEvent(r);
        remaining -= rows.length;
        if (rows.length < pageSize) return;
        after = toNum(rows[rows.length - 1]?.seq);
      }
    },

    async head() {
      await flush();
      return readHead(ctx.db);
    },

    async verify(anchor) {
      await flush();
      // Without the head nothing can be checked (it also says where the keyed chain starts):
      // the trail is broken where the head should point, at the newest stored event.
      const headMissing = async () => ({
        ok: false as const,
        checked: 0,
        brokenAt: await newestSeq(ctx.db),
        reason: 'the stored head is missing',
        head: { seq: 0, hash: AUDIT_GENESIS_HASH, keyed_from_seq: 1, mac: null },
      });
      const head = await readHeadIfStored(ctx.db);
      if (!head) return headMissing();
      let key: AuditChainKey;
      try {
        key = await chainKey(ctx);
      } catch {
        // The stored chain key is sealed under a key this storage's keyring does not hold.
        return {
          ok: false,
          checked: 0,
          brokenAt: 1,
          reason: 'the chain key does not open with this encryption key',
          head,
        };
      }
      const result = await verifyAuditChain(
        through(repository.stream({ pageSize: 1000 }), head.seq),
        key,
        head,
        anchor,
      );
      if (!result.ok) return { ...result, head };
      // Rows beyond the head that no append wrote (an append commits its row and the head
      // together, so the newest seq read first cannot exceed the head read after it).
      const newest = await newestSeq(ctx.db);
      const now = await readHeadIfStored(ctx.db);
      if (!now) return headMissing();
      if (newest > now.seq) {
        return {
          ok: false,
          checked: result.checked,
          brokenAt: now.seq + 1,
          reason: 'event after the stored head',
          head,
        };
      }
      return { ...result, head };
    },

    async list(query = {}) {
      await flush();
      const { limit, offset } = pageWindow(query);
      let base = ctx.db.selectFrom('audit_events');
      if (query.action !== undefined) base = base.where('action', '=', query.action);
      if (query.resource_id !== undefined) base = base.where('resource_id', '=', query.resource_id);
      if (query.category !== undefined) base = base.where('category', '=', query.category);
      const total = await base.select((eb) => eb.fn.countAll().as('n')).executeTakeFirst();
      const rows = await base.selectAll().orderBy('seq', 'desc').limit(limit).offset(offset).execute();
      return { items: rows.map(toEvent), total: count(total) };
    },
  };
  return repository;
}
