import {
  CERTIFICATE_STATUSES,
  type CertificateFilter,
  type CertificateListKey,
  type CertificateListQuery,
  type CertificatePatch,
  type CertificateRepository,
  type CertificateSource,
  type CertificateStatus,
  type ManagedCertificate,
  type NewCertificate,
  newId,
  notFound,
} from '@certwright/core';
import {
  CompiledQuery,
  type Expression,
  type ExpressionBuilder,
  type Insertable,
  type Selectable,
  type SelectQueryBuilder,
  type SqlBool,
  sql,
} from 'kysely';
import { atomic, type Ctx, count, defined, likeContains, pageWindow, parseJson } from '../context.js';
import type { CertificatesTable, Database } from '../schema.js';
import { countByStatus, lockFound } from './crud.js';
import { indexedPart, narrowsIndex, patternWords, rememberedCommonWords, wordKey } from './search-words.js';

type Row = Selectable<CertificatesTable>;

export function toCertificate(r: Row): ManagedCertificate {
  return {
    id: r.id,
    name: r.name,
    common_name: r.common_name,
    sans: parseJson<string[]>(r.sans, []),
    status: r.status as CertificateStatus,
    source: r.source as CertificateSource,
    issuer_id: r.issuer_id,
    owner_id: r.owner_id,
    team_id: r.team_id,
    renewal_policy_id: r.renewal_policy_id,
    profile_id: r.profile_id,
    environment: r.environment,
    metadata: parseJson<Record<string, string>>(r.metadata, {}),
    tags: parseJson<string[]>(r.tags, []),
    current_version_id: r.current_version_id,
    expires_at: r.expires_at,
    last_renewal_at: r.last_renewal_at,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

const searchText = (name: string, cn: string, sans: readonly string[]) =>
  [name, cn, ...sans].join('\n').toLowerCase();

/**
 * A new certificate as `create` stores it, and its row; `pointer` is its first version when
 * it is stored together with it (versions.createWithCertificate).
 */
export function newCertificateRow(
  input: NewCertificate,
  now: Date,
  pointer?: { current_version_id: string; expires_at: Date },
): { certificate: ManagedCertificate; row: Insertable<CertificatesTable> } {
  const cert: ManagedCertificate = {
    id: input.id ?? newId('certificate'),
    name: input.name,
    common_name: input.common_name,
    sans: input.sans ?? [],
    status: input.status ?? 'Pending',
    source: input.source ?? '',
    issuer_id: input.issuer_id,
    owner_id: input.owner_id,
    team_id: input.team_id,
    renewal_policy_id: input.renewal_policy_id,
    profile_id: input.profile_id ?? null,
    environment: input.environment ?? null,
    metadata: input.metadata ?? {},
    tags: input.tags ?? [],
    current_version_id: pointer?.current_version_id ?? null,
    expires_at: pointer?.expires_at ?? input.expires_at ?? null,
    last_renewal_at: input.last_renewal_at ?? null,
    created_at: input.created_at ?? now,
    updated_at: input.created_at ?? now,
  };
  return {
    certificate: cert,
    row: {
      ...cert,
      sans: JSON.stringify(cert.sans),
      metadata: JSON.stringify(cert.metadata),
      tags: JSON.stringify(cert.tags),
      search_text: searchText(cert.name, cert.common_name, cert.sans),
    },
  };
}

/** The columns a patch sets: only the members it defines, JSON members serialized. */
function patchColumns(patch: CertificatePatch) {
  return defined({
    name: patch.name,
    common_name: patch.common_name,
    status: patch.status,
    source: patch.source,
    issuer_id: patch.issuer_id,
    owner_id: patch.owner_id,
    team_id: patch.team_id,
    renewal_policy_id: patch.renewal_policy_id,
    profile_id: patch.profile_id,
    environment: patch.environment,
    last_renewal_at: patch.last_renewal_at,
    sans: patch.sans && JSON.stringify(patch.sans),
    metadata: patch.metadata && JSON.stringify(patch.metadata),
    tags: patch.tags && JSON.stringify(patch.tags),
  });
}

const SORT_COLUMNS = {
  name: 'name',
  common_name: 'common_name',
  status: 'status',
  expires_at: 'expires_at',
  created_at: 'created_at',
  updated_at: 'updated_at',
} as const;

type CertQuery<O> = SelectQueryBuilder<Database, 'certificates', O>;

/**
 * The filter's conditions. `indexedSearch` (PostgreSQL/PGlite, from searchLookup) is a part
 * of the search pattern for the trigram index; the whole pattern is then tested per row
 * (`strpos`, which the trigram index does not serve, so the planner asks it for the part only).
 */
function applyFilter<O>(
  ctx: Ctx,
  qb: CertQuery<O>,
  f: CertificateFilter,
  indexedSearch?: string,
): CertQuery<O> {
  let q = qb;
  if (f.ids)
    q = f.ids.length === 0 ? q.where((eb) => eb.val(1), '=', 0) : q.where('certificates.id', 'in', f.ids);
  if (f.status !== undefined) {
    const list = Array.isArray(f.status) ? f.status : [f.status];
    q = list.length === 0 ? q.where((eb) => eb.val(1), '=', 0) : q.where('certificates.status', 'in', list);
  }
  if (f.notStatus && f.notStatus.length > 0) q = q.where('certificates.status', 'not in', f.notStatus);
  if (f.issuer_id !== undefined) q = q.where('certificates.issuer_id', '=', f.issuer_id);
  if (f.owner_id !== undefined) q = q.where('certificates.owner_id', '=', f.owner_id);
  if (f.team_id !== undefined) q = q.where('certificates.team_id', '=', f.team_id);
  if (f.profile_id !== undefined) q = q.where('certificates.profile_id', '=', f.profile_id);
  if (f.renewal_policy_id !== undefined)
    q = q.where('certificates.renewal_policy_id', '=', f.renewal_policy_id);
  if (f.source !== undefined) q = q.where('certificates.source', '=', f.source);
  if (f.environment !== undefined) q = q.where('certificates.environment', '=', f.environment);
  if (f.expiresBefore) q = q.where('certificates.expires_at', '<', f.expiresBefore);
  if (f.expiresAfter) q = q.where('certificates.expires_at', '>=', f.expiresAfter);
  if (f.search !== undefined && f.search !== '') {
    if (indexedSearch === undefined) q = q.where('certificates.search_text', 'like', likeContains(f.search));
    else
      q = q
        .where('certificates.search_text', 'like', likeContains(indexedSearch))
        .where(sql<boolean>`strpos(certificates.search_text, ${f.search.toLowerCase()}) > 0`);
  }
  if (f.serial !== undefined) {
    // Serials are stored as the DER integer's hex, which may carry one or two padding zeros.
    const bare = f.serial.replace(/^0+(?=.)/, '');
    const spellings = [bare, `0${bare}`, `00${bare}`, `000${bare}`];
    q = q.where('certificates.id', 'in', (eb: ExpressionBuilder<Database, 'certificates'>) =>
      eb
        .selectFrom('certificate_versions')
        .select('certificate_versions.certificate_id')
        .where('certificate_versions.serial_number', 'in', spellings),
    );
  }
  if (f.agent_id !== undefined) {
    const agentId = f.agent_id;
    q = q.where((eb: ExpressionBuilder<Database, 'certificates'>) =>
      eb.exists(
        eb
          .selectFrom('certificate_targets')
          .innerJoin('deployment_targets', 'deployment_targets.id', 'certificate_targets.target_id')
          .select('certificate_targets.target_id')
          .whereRef('certificate_targets.certificate_id', '=', 'certificates.id')
          .where('deployment_targets.agent_id', '=', agentId),
      ),
    );
  }
  void ctx;
  return q;
}

type SortColumn = (typeof SORT_COLUMNS)[keyof typeof SORT_COLUMNS];

/**
 * Rows strictly after `key` in the order `column order, id order`, as conditions to run one after
 * another (each ordered the same way) until the page is full. PostgreSQL compares the row value
 * `(column, id)`, which its b-tree serves as one range; MySQL/MariaDB optimize row values poorly,
 * so there the column's bound comes first and the tie on it is broken by id. NULLs (only
 * `expires_at` has them) sort last ascending and first descending on PostgreSQL, the other way
 * round on MySQL/MariaDB: the conditions follow each engine's own order, so a keyset walk returns
 * exactly the rows an offset walk would. The NULL rows are a second condition rather than an OR,
 * which would keep the database from using the index range.
 */
function afterKey(
  ctx: Ctx,
  column: SortColumn,
  order: 'asc' | 'desc',
  key: CertificateListKey,
): ((eb: ExpressionBuilder<Database, 'certificates'>) => Expression<SqlBool>)[] {
  const col = `certificates.${column}` as const;
  const cmp = order === 'asc' ? '>' : '<';
  const nullsFirst = (ctx.flavor === 'mysql') === (order === 'asc');
  const value = key.value;
  if (value === null) {
    const rest = (eb: ExpressionBuilder<Database, 'certificates'>) =>
      eb.and([eb(col, 'is', null), eb('certificates.id', cmp, key.id)]);
    return nullsFirst ? [rest, (eb) => eb(col, 'is not', null)] : [rest];
  }
  const beyond = (eb: ExpressionBuilder<Database, 'certificates'>) =>
    ctx.flavor === 'postgres'
      ? eb(eb.refTuple(col, 'certificates.id'), cmp, eb.tuple(value, key.id))
      : eb.and([
          eb(col, order === 'asc' ? '>=' : '<=', value),
          eb.or([eb(col, cmp, value), eb('certificates.id', cmp, key.id)]),
        ]);
  return nullsFirst || column !== 'expires_at' ? [beyond] : [beyond, (eb) => eb(col, 'is', null)];
}

/**
 * The number of matches of `base` as one value of a statement (a scalar subquery): exact up to
 * `cap`, counting stops at cap + 1 rows so the cost is bounded however many match. Beyond `cap`,
 * on PostgreSQL/PGlite, the planner's estimate of `estimateOf` (cw_plan_rows, migration 27;
 * never below cap + 1), so the page, its count and its estimate take one statement; MySQL/MariaDB
 * answer cap + 1 there and the caller asks for the estimate (plannerEstimate). `estimateOf`
 * states the same filter as `base` in the form the planner estimates best (a search with its
 * whole pattern as one LIKE, rather than the part for the index plus a per-row test).
 */
function cappedTotal(
  ctx: Ctx,
  base: () => CertQuery<object>,
  cap: number,
  estimateOf: () => CertQuery<object> = base,
) {
  // Unordered, so the planner may answer from any index (often index-only) and stop early.
  const counted = ctx.db
    .selectFrom(
      base()
        .select(sql<number>`1`.as('one'))
        .limit(cap + 1)
        .as('m'),
    )
    .select((eb) => eb.fn.countAll().as('n'));
  if (ctx.flavor !== 'postgres') return counted;
  const planned = inlined(estimateOf().select(sql<number>`1`.as('one')).compile());
  return ctx.db
    .selectFrom(counted.as('c'))
    .select(
      sql<number>`case when c.n > ${sql.lit(cap)} then greatest(${sql.lit(cap + 1)}, cw_plan_rows(${planned})) else c.n end`.as(
        'n',
      ),
    ) as unknown as typeof counted;
}

/** A total read from cappedTotal: estimated above `cap`, and on MySQL/MariaDB estimated here. */
async function fromCappedTotal(
  ctx: Ctx,
  value: unknown,
  cap: number,
  estimateOf: () => CertQuery<object>,
): Promise<{ total: number; estimated: boolean }> {
  const n = Number(value);
  if (n <= cap) return { total: n, estimated: false };
  if (ctx.flavor === 'postgres') return { total: n, estimated: true };
  return { total: Math.max(cap + 1, await plannerEstimate(ctx, estimateOf())), estimated: true };
}

/**
 * A compiled query with its parameters written in as literals, for a query text that the
 * database plans by itself (cw_plan_rows). Strings go as E'…' with backslashes and quotes
 * doubled, which reads back the same text whatever standard_conforming_strings says; the filters
 * pass strings, instants and numbers only.
 */
function inlined(q: CompiledQuery): string {
  const literal = (value: unknown) => {
    if (typeof value === 'string') return `E'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
    if (value instanceof Date) return `'${value.toISOString()}'`;
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    throw new Error(`no literal for a parameter of type ${typeof value}`);
  };
  return q.sql.replace(/\$(\d+)/g, (_, n: string) => literal(q.parameters[Number(n) - 1]));
}

/**
 * The number of matches: exact up to `limit`, the query planner's row estimate beyond it
 * (cappedTotal). Without a limit, always exact (bulk operations and other internal callers rely
 * on exact counts).
 */
async function countMatches(
  ctx: Ctx,
  base: () => CertQuery<object>,
  limit: number | undefined,
  estimateOf: () => CertQuery<object> = base,
): Promise<{ total: number; estimated: boolean }> {
  if (limit === undefined) {
    const row = await base()
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirst();
    return { total: count(row), estimated: false };
  }
  const row = await cappedTotal(ctx, base, limit, estimateOf).executeTakeFirst();
  return fromCappedTotal(ctx, row?.n, limit, estimateOf);
}

/** The planner's estimate of the rows a query returns (EXPLAIN; nothing is read but statistics). */
async function plannerEstimate(ctx: Ctx, q: CertQuery<object>): Promise<number> {
  const compiled = q.select(sql<number>`1`.as('one')).compile();
  if (ctx.flavor === 'postgres') {
    const res = await ctx.db.executeQuery<{ 'QUERY PLAN': unknown }>(
      CompiledQuery.raw(`explain (format json) ${compiled.sql}`, [...compiled.parameters]),
    );
    const raw = res.rows[0]?.['QUERY PLAN'];
    const plan = (typeof raw === 'string' ? JSON.parse(raw) : raw) as { Plan?: { 'Plan Rows'?: number } }[];
    return Math.round(Number(plan?.[0]?.Plan?.['Plan Rows'] ?? 0));
  }
  const res = await ctx.db.executeQuery<{ rows?: number | string; filtered?: number | string | null }>(
    CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]),
  );
  const first = res.rows[0];
  const filtered = first?.filtered == null ? 100 : Number(first.filtered);
  return Math.round((Number(first?.rows ?? 0) * filtered) / 100);
}

/**
 * How the trigram index is asked for a search (PostgreSQL/PGlite; MySQL/MariaDB have no
 * substring index). `part`: the part of the pattern asked of the index when the pattern's end
 * words are common (search-words.ts), undefined for the whole pattern. `narrows`: the part asked
 * has a word that yields trigrams and that fewer than half the rows contain where it starts or
 * ends as it does in the part (boundaryKeys), so the index returns few rows beyond the matches; a part of common words only, or without a trigram, makes the
 * index return most of the scope, each row then read from the table and tested (searchPage).
 */
async function searchLookup(
  ctx: Ctx,
  search: string | undefined,
  commonWords: ReturnType<typeof rememberedCommonWords>,
): Promise<{ part?: string; narrows: boolean }> {
  if (ctx.flavor !== 'postgres' || search === undefined) return { narrows: false };
  const pattern = search.toLowerCase();
  const words = patternWords(pattern);
  if (words.length === 0) return { narrows: false };
  // Each word judged where it starts or ends as in the pattern (`host$`, `^1`): a separator
  // there gives the index the trigrams of the word's edge, rarer than the word anywhere.
  const keys = await commonWords(ctx.db, [...new Set(words.map((w) => wordKey(w, pattern)))]);
  const part = words.length < 2 ? undefined : indexedPart(pattern, (_, key) => keys.has(key));
  const lookup = part ?? pattern;
  return { part, narrows: narrowsIndex(lookup, (k) => keys.has(k)) };
}

/**
 * Up to this many matches (as the planner expects them), a search page on PostgreSQL/PGlite is
 * sorted out of all the matches rather than read by walking the sort order's index (searchPage).
 */
const SEARCH_SORT_ALL_LIMIT = 10_000;

/**
 * A page of a search (`list` with `search` and an exact-total limit).
 *
 * A substring search leaves the planner two ways to a sorted page: walk the sort column's index
 * and test each row until the page is full, or find every match through the trigram index and
 * sort them. It prices the walk as if matches were spread evenly through the order; when they
 * are not — names of one series created together, so that a filter and a search select old rows
 * only — the walk reads most of the table (hundreds of milliseconds at a million rows). So one
 * statement takes at most `bound` + 1 matches in no order (the trigram index, or a scan that stops
 * early; the LIMIT keeps the planner from ordering or flattening the subquery), counts them with
 * a window and sorts the page out of them: when there are `bound` or fewer, that is the page and
 * the number of matches, in one round trip and one index lookup. When there are more, matches are
 * common enough that the ordered walk finds a page quickly: the planner chooses.
 *
 * The matches are taken as keys only (id and sort column) and the page's rows joined by id
 * afterwards: an index holding the filter's columns and the searched text (migration 24, the
 * owner's) can then answer the matches without reading a row of the table, where full rows would
 * be read from one table page each. On PostgreSQL/PGlite, when the trigram index narrows the rows
 * down (`narrows`, searchLookup), the keys also carry each match's tuple id (`ctid`), which that
 * covering index cannot provide: the matches then come from the search index, each read from its
 * table page once, and the page's rows are joined by tuple id. The planner prices that below
 * walking the owner's index entries only when matches are much rarer than the owner's rows (it
 * takes a table page read for four index page reads); measured, a match read through the search
 * index costs about six of the owner's index entries walked and tested, and the number of
 * matches is bounded here while the owner's entries are not (docs/storage/README.md, "Inventory
 * at scale": 5,555 matches among an owner's 50,000 entries, 14 ms of the server's CPU walked,
 * 10 ms looked up). A lookup that does not narrow (a pattern of common words, or with no
 * trigram) would read most of the scope's rows from the table, so there the planner chooses.
 *
 * `bound` is the exact-total limit `cap`, or SEARCH_SORT_ALL_LIMIT on PostgreSQL/PGlite when the
 * planner expects no more matches than that (its estimate plans the query without reading it; a
 * cursor carries the first page's total instead). Above `cap` the total is flagged estimated
 * even when counted, as every list's is. MySQL and MariaDB have no substring index
 * (docs/storage/README.md): there `bound` is `cap`.
 */
async function searchPage(
  ctx: Ctx,
  base: () => CertQuery<object>,
  estimateOf: () => CertQuery<object>,
  column: SortColumn,
  cap: number,
  estimatedTotal: number | undefined,
  readPage: (from: () => CertQuery<object>, keys?: 'id' | 'tid') => Promise<Row[]>,
  narrows: boolean,
): Promise<{ rows: Row[]; total: number; estimated: boolean }> {
  const estimate = async () => Math.max(cap + 1, await plannerEstimate(ctx, estimateOf()));
  const sortsAll = ctx.flavor === 'postgres';
  // Matches found through a narrowing index lookup carry their tuple id (see above).
  const ctid = ctx.flavor === 'postgres' && narrows;
  const expected = estimatedTotal ?? (sortsAll ? await estimate() : undefined);
  const bound =
    sortsAll && expected !== undefined && expected <= SEARCH_SORT_ALL_LIMIT ? SEARCH_SORT_ALL_LIMIT : cap;
  // A carried total above the bound: the matches are common, walk at once.
  if (estimatedTotal !== undefined && estimatedTotal > bound)
    return { rows: await readPage(base), total: estimatedTotal, estimated: true };
  const capped = () =>
    ctx.db.selectFrom(
      ctx.db
        .selectFrom(
          base()
            .select(['certificates.id', `certificates.${column}`])
            // PostgreSQL/PGlite: each match's tuple id too, by which the page's rows are read.
            .$if(ctid, (q) => q.select(sql<string>`certificates.ctid`.as('cw_tid')))
            .limit(bound + 1)
            .as('m'),
        )
        .selectAll()
        .select(sql<number>`count(*) over ()`.as('cw_matches'))
        .as('certificates'),
    ) as unknown as CertQuery<object>;
  const rows = (await readPage(capped, ctid ? 'tid' : 'id')) as (Row & { cw_matches: number | string })[];
  const matches = rows[0] === undefined ? undefined : Number(rows[0].cw_matches);
  if (matches !== undefined && matches <= bound)
    return estimatedTotal === undefined
      ? { rows, total: matches, estimated: matches > cap }
      : { rows, total: estimatedTotal, estimated: true };
  let total = estimatedTotal;
  if (total === undefined) {
    if (matches === undefined) {
      // An empty page (past the last match, or none match) tells nothing of the total.
      const counted = await countMatches(ctx, base, cap, estimateOf);
      if (!counted.estimated) return { rows: [], total: counted.total, estimated: false };
      total = counted.total;
    } else total = Math.max(matches, expected ?? (await estimate()));
  }
  return { rows: await readPage(base), total, estimated: true };
}

export function certificateRepository(ctx: Ctx): CertificateRepository {
  const read = async (id: string, lock = false) => {
    const q = ctx.db.selectFrom('certificates').selectAll().where('id', '=', id);
    const row = await (lock ? q.forUpdate() : q).executeTakeFirst();
    return row ? toCertificate(row) : null;
  };
  const get = (id: string) => read(id);
  const require = async (id: string) => {
    const found = await get(id);
    if (!found) throw notFound('certificate', id);
    return found;
  };

  // Per storage (and per transaction, where it is rarely used): verdicts on search words.
  const commonWords = rememberedCommonWords(ctx.clock);

  const repo: CertificateRepository = {
    get,
    require,
    lockForUpdate: lockFound(ctx, 'certificate', (id) => read(id, true)),

    async create(input: NewCertificate) {
      const { certificate, row } = newCertificateRow(input, ctx.clock.now());
      await ctx.db.insertInto('certificates').values(row).execute();
      return certificate;
    },

    async update(id: string, patch: CertificatePatch) {
      return atomic(ctx, async (c) => {
        const named = [patch.name, patch.common_name, patch.sans].filter((v) => v !== undefined).length;
        // search_text derives from name, common_name and sans only: a patch that sets none of
        // them leaves it as it is, one that sets all three needs nothing else, and one that
        // sets some needs the others from the row.
        let search: string | undefined;
        if (named === 3) search = searchText(patch.name!, patch.common_name!, patch.sans!);
        else if (named > 0) {
          const next = { ...(await certificateRepository(c).require(id)), ...defined(patch) };
          search = searchText(next.name, next.common_name, next.sans);
        }
        const update = c.db
          .updateTable('certificates')
          .set({
            ...patchColumns(patch),
            ...(search === undefined ? {} : { search_text: search }),
            updated_at: c.clock.now(),
          })
          .where('id', '=', id);
        if (c.flavor === 'postgres') {
          const row = await update.returningAll().executeTakeFirst();
          if (!row) throw notFound('certificate', id);
          return toCertificate(row);
        }
        // MariaDB has no UPDATE … RETURNING: read the row back (also the not_found check).
        await update.execute();
        return certificateRepository(c).require(id);
      });
    },

    async delete(id: string) {
      const res = await ctx.db.deleteFrom('certificates').where('id', '=', id).executeTakeFirst();
      if (Number(res.numDeletedRows) === 0) throw notFound('certificate', id);
    },

    async list(query: CertificateListQuery = {}) {
      const { limit, offset } = pageWindow(query);
      const searching = query.search !== undefined && query.search !== '';
      const lookup = searching ? await searchLookup(ctx, query.search, commonWords) : { narrows: false };
      const indexedSearch = lookup.part;
      const base = () => applyFilter(ctx, ctx.db.selectFrom('certificates'), query, indexedSearch);
      const estimateOf = () => applyFilter(ctx, ctx.db.selectFrom('certificates'), query);
      const sort = query.sort ?? 'created_at';
      const column = SORT_COLUMNS[sort];
      const order = query.order ?? (query.sort ? 'asc' : 'desc');
      const after = query.after;
      // `total`: a value every row carries (cappedTotal), read with the page in one statement.
      const readPage = async (
        from: () => CertQuery<object>,
        keys?: 'id' | 'tid',
        total?: ReturnType<typeof cappedTotal>,
      ) => {
        const ordered = (q: CertQuery<Row>) => q.orderBy(column, order).orderBy('id', order);
        // With `keys`, `from` holds only the matches' keys (searchPage): the page's rows are
        // read by id, or by tuple id where the keys carry it (one tuple read per row).
        const rowsOf = (page: CertQuery<Row>) =>
          keys
            ? (ctx.db
                .selectFrom('certificates')
                .innerJoin(page.as('k'), (j) =>
                  keys === 'tid'
                    ? j.on(sql`k.cw_tid`, '=', sql`certificates.ctid`)
                    : j.onRef('k.id' as never, '=', 'certificates.id'),
                )
                .selectAll('certificates')
                .select('k.cw_matches' as never)
                .orderBy(`certificates.${column}`, order)
                .orderBy('certificates.id', order) as unknown as CertQuery<Row>)
            : page;
        const selected = () => (total ? from().selectAll().select(total.as('cw_total')) : from().selectAll());
        // One row beyond the page says whether another page follows.
        if (!after)
          return rowsOf(
            ordered(selected())
              .limit(limit + 1)
              .offset(offset),
          ).execute();
        const rows: Row[] = [];
        for (const condition of afterKey(ctx, column, order, after)) {
          if (rows.length > limit) break;
          rows.push(
            ...(await rowsOf(ordered(selected().where(condition)).limit(limit + 1 - rows.length)).execute()),
          );
        }
        return rows;
      };
      // A search counts while it reads (see searchPage); every other filter reads its page first.
      const searched =
        searching && query.exactTotalLimit !== undefined
          ? await searchPage(
              ctx,
              base,
              estimateOf,
              column,
              query.exactTotalLimit,
              query.estimatedTotal,
              readPage,
              lookup.narrows,
            )
          : undefined;
      // Every other filter reads its page with the capped total (cappedTotal) when it needs one.
      const cap = query.exactTotalLimit;
      const counted = cap !== undefined && query.estimatedTotal === undefined;
      const rows =
        searched?.rows ??
        (await readPage(base, undefined, counted ? cappedTotal(ctx, base, cap, estimateOf) : undefined));
      const more = rows.length > limit;
      const items = rows.slice(0, limit).map(toCertificate);
      const last = items[items.length - 1];
      const next = more && last ? { value: last[sort] as string | Date | null, id: last.id } : null;
      // An offset page that is the last one, and not empty, already tells the total.
      if (!after && !more && (offset === 0 || items.length > 0))
        return { items, total: offset + items.length, totalEstimated: false, next };
      if (searched) return { items, total: searched.total, totalEstimated: searched.estimated, next };
      if (query.estimatedTotal !== undefined)
        return { items, total: query.estimatedTotal, totalEstimated: true, next };
      // An empty page (past the last match) carries no total: it is counted on its own.
      const carried = (rows[0] as { cw_total?: unknown } | undefined)?.cw_total;
      const { total, estimated } =
        counted && carried !== undefined
          ? await fromCappedTotal(ctx, carried, cap, estimateOf)
          : await countMatches(ctx, base, cap, estimateOf);
      return { items, total, totalEstimated: estimated, next };
    },

    async listIds(filter, batch) {
      let q = applyFilter(ctx, ctx.db.selectFrom('certificates'), filter).select('id');
      if (batch.afterId !== undefined) q = q.where('id', '>', batch.afterId);
      const rows = await q.orderBy('id').limit(batch.limit).execute();
      return rows.map((r) => r.id);
    },

    async updateMany(ids, patch) {
      if (ids.length === 0) return 0;
      if (patch.name !== undefined || patch.common_name !== undefined || patch.sans !== undefined) {
        // search_text depends on each row's own values, so these go one row at a time.
        let n = 0;
        await atomic(ctx, async (c) => {
          for (const id of ids) {
            await certificateRepository(c).update(id, patch);
            n += 1;
          }
        });
        return n;
      }
      const res = await ctx.db
        .updateTable('certificates')
        .set({
          // name, common_name and sans went row by row above: here they are undefined.
          ...patchColumns(patch),
          updated_at: ctx.clock.now(),
        })
        .where('id', 'in', ids)
        .executeTakeFirst();
      return Number(res.numUpdatedRows);
    },

    count(filter, options) {
      return countMatches(
        ctx,
        () => applyFilter(ctx, ctx.db.selectFrom('certificates'), filter),
        options?.exactLimit,
      );
    },

    async countEach(filters, options) {
      if (filters.length === 0) return [];
      const query = (f: CertificateFilter) => applyFilter(ctx, ctx.db.selectFrom('certificates'), f);
      const cap = options.exactLimit;
      // Every capped count in one statement (one round trip, however many filters), each with
      // its estimate where it passes the cap on PostgreSQL/PGlite (cappedTotal).
      const arms = filters.map((f, i) =>
        ctx.db.selectNoFrom([
          sql<number>`${sql.lit(i)}`.as('k'),
          cappedTotal(ctx, () => query(f), cap).as('n'),
        ]),
      );
      const rows = await arms
        .slice(1)
        .reduce((all, arm) => all.unionAll(arm), arms[0]!)
        .execute();
      const totals = new Map(rows.map((r) => [Number(r.k), r.n]));
      // MySQL/MariaDB: only the filters beyond the cap need the planner's estimate (statistics only).
      return Promise.all(
        filters.map((f, i) => fromCappedTotal(ctx, totals.get(i) ?? 0, cap, () => query(f))),
      );
    },

    countByStatus() {
      return countByStatus(ctx, 'certificates', CERTIFICATE_STATUSES);
    },

    async setTargets(certificateId, targetIds) {
      await atomic(ctx, async (c) => {
        await certificateRepository(c).require(certificateId);
        await c.db.deleteFrom('certificate_targets').where('certificate_id', '=', certificateId).execute();
        const unique = [...new Set(targetIds)];
        if (unique.length > 0) {
          const now = c.clock.now();
          await c.db
            .insertInto('certificate_targets')
            .values(
              unique.map((target_id) => ({ certificate_id: certificateId, target_id, created_at: now })),
            )
            .execute();
        }
      });
    },

    async listTargetIds(certificateId) {
      const rows = await ctx.db
        .selectFrom('certificate_targets')
        .select('target_id')
        .where('certificate_id', '=', certificateId)
        .orderBy('target_id')
        .execute();
      return rows.map((r) => r.target_id);
    },

    async renewalDue({ now, statuses = ['Active', 'Expiring'], limit }) {
      // One indexed range query per policy (there are few): "window opened" means
      // expires_at ≤ now + window, and that arithmetic is done here rather than in
      // dialect-specific SQL date functions.
      const policies = await ctx.db
        .selectFrom('renewal_policies')
        .select(['id', 'renewal_window_days'])
        .execute();
      const found: ManagedCertificate[] = [];
      for (const p of policies) {
        const horizon = new Date(now.getTime() + Number(p.renewal_window_days) * 86_400_000);
        const rows = await ctx.db
          .selectFrom('certificates')
          .selectAll()
          .where('renewal_policy_id', '=', p.id)
          .where('expires_at', '<=', horizon)
          .where('status', 'in', statuses)
          .orderBy('expires_at')
          .orderBy('id')
          .limit(limit)
          .execute();
        found.push(...rows.map(toCertificate));
      }
      found.sort(
        (a, b) => (a.expires_at?.getTime() ?? 0) - (b.expires_at?.getTime() ?? 0) || (a.id < b.id ? -1 : 1),
      );
      return found.slice(0, limit);
    },

    async references(id) {
      const [versions, jobs] = await Promise.all([
        ctx.db
          .selectFrom('certificate_versions')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('certificate_id', '=', id)
          .executeTakeFirst(),
        ctx.db
          .selectFrom('jobs')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('certificate_id', '=', id)
          .where('status', 'in', ['Pending', 'AwaitingCSR', 'Running'])
          .executeTakeFirst(),
      ]);
      return { versions: count(versions), open_jobs: count(jobs) };
    },
  };
  return repo;
}
