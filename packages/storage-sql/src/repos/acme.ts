import {
  type AcmeAccount,
  type AcmeAccountRepository,
  type AcmeAuthorization,
  type AcmeAuthorizationRepository,
  type AcmeAuthorizationWithChallenges,
  type AcmeChallenge,
  type AcmeChallengeRepository,
  type AcmeEabKey,
  type AcmeEabKeyRepository,
  type AcmeOrder,
  type AcmeOrderRepository,
  type AcmeStorage,
  newId,
} from '@certwright/core';
import type { QueryCreator, Selectable } from 'kysely';
import { atomic, type Ctx, defined, parseJson, toBool } from '../context.js';
import type {
  AcmeAccountsTable,
  AcmeAuthorizationsTable,
  AcmeChallengesTable,
  AcmeEabKeysTable,
  AcmeOrdersTable,
  Database,
} from '../schema.js';
import { deleteById, listPage, lockFound, requireFound, updateById } from './crud.js';

const toAccount = (r: Selectable<AcmeAccountsTable>): AcmeAccount => ({
  id: r.id,
  profile_id: r.profile_id,
  status: r.status as AcmeAccount['status'],
  jwk: parseJson(r.jwk, {}),
  jwk_thumbprint: r.jwk_thumbprint,
  contact: parseJson(r.contact, []),
  terms_agreed: toBool(r.terms_agreed),
  eab_key_id: r.eab_key_id,
  created_ip: r.created_ip,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

const toOrder = (r: Selectable<AcmeOrdersTable>): AcmeOrder => ({
  id: r.id,
  account_id: r.account_id,
  profile_id: r.profile_id,
  status: r.status as AcmeOrder['status'],
  identifiers: parseJson(r.identifiers, []),
  not_before: r.not_before,
  not_after: r.not_after,
  expires: r.expires,
  error: parseJson(r.error, null),
  acme_profile: r.acme_profile,
  replaces: r.replaces,
  certificate_id: r.certificate_id,
  job_id: r.job_id,
  version_id: r.version_id,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

const toAuthorization = (r: Selectable<AcmeAuthorizationsTable>): AcmeAuthorization => ({
  id: r.id,
  order_id: r.order_id,
  account_id: r.account_id,
  identifier: { type: r.identifier_type as 'dns' | 'ip', value: r.identifier_value },
  wildcard: toBool(r.wildcard),
  status: r.status as AcmeAuthorization['status'],
  expires: r.expires,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

const toChallenge = (r: Selectable<AcmeChallengesTable>): AcmeChallenge => ({
  id: r.id,
  authorization_id: r.authorization_id,
  type: r.type as AcmeChallenge['type'],
  token: r.token,
  status: r.status as AcmeChallenge['status'],
  validated_at: r.validated_at,
  error: parseJson(r.error, null),
  created_at: r.created_at,
  updated_at: r.updated_at,
});

/*
 * Reads that join authorizations and challenges (one statement instead of one per table): the
 * joined tables' columns come back under a prefix (`a_…`, `c_…`) and are folded into objects.
 */
const AUTHZ_COLUMNS = [
  'id',
  'order_id',
  'account_id',
  'identifier_type',
  'identifier_value',
  'wildcard',
  'status',
  'expires',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof AcmeAuthorizationsTable)[];
const CHALLENGE_COLUMNS = [
  'id',
  'authorization_id',
  'type',
  'token',
  'status',
  'validated_at',
  'error',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof AcmeChallengesTable)[];

const authzSelection = AUTHZ_COLUMNS.map((c) => `a.${c} as a_${c}` as const);
const challengeSelection = CHALLENGE_COLUMNS.map((c) => `c.${c} as c_${c}` as const);

type Prefixed = Record<string, unknown>;
const unprefix = <T>(row: Prefixed, prefix: string, columns: readonly string[]): T =>
  Object.fromEntries(columns.map((c) => [c, row[`${prefix}${c}`]])) as T;

/** Folds joined rows (ordered by authorization, then challenge) into authorizations with challenges. */
function foldAuthorizations(rows: readonly Prefixed[]): AcmeAuthorizationWithChallenges[] {
  const out: AcmeAuthorizationWithChallenges[] = [];
  let current: AcmeAuthorizationWithChallenges | undefined;
  for (const row of rows) {
    if (row.a_id === null || row.a_id === undefined) continue;
    if (current?.id !== row.a_id) {
      current = {
        ...toAuthorization(unprefix<Selectable<AcmeAuthorizationsTable>>(row, 'a_', AUTHZ_COLUMNS)),
        challenges: [],
      };
      out.push(current);
    }
    if (row.c_id !== null && row.c_id !== undefined)
      current.challenges.push(
        toChallenge(unprefix<Selectable<AcmeChallengesTable>>(row, 'c_', CHALLENGE_COLUMNS)),
      );
  }
  return out;
}

const toEabKey = (r: Selectable<AcmeEabKeysTable>): AcmeEabKey => ({
  id: r.id,
  profile_id: r.profile_id,
  name: r.name,
  account_id: r.account_id,
  bound_at: r.bound_at,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

const json = (value: unknown) =>
  value === undefined ? undefined : value === null ? null : JSON.stringify(value);

function accountRepository(ctx: Ctx): AcmeAccountRepository {
  const read = async (id: string, lock = false) => {
    const q = ctx.db.selectFrom('acme_accounts').selectAll().where('id', '=', id);
    const r = await (lock ? q.forUpdate() : q).executeTakeFirst();
    return r ? toAccount(r) : null;
  };
  const get = (id: string) => read(id);
  const require = requireFound('ACME account', get);
  return {
    get,
    lockForUpdate: lockFound(ctx, 'ACME account', (id) => read(id, true)),
    async getByThumbprint(profileId, thumbprint) {
      const r = await ctx.db
        .selectFrom('acme_accounts')
        .selectAll()
        .where('profile_id', '=', profileId)
        .where('jwk_thumbprint', '=', thumbprint)
        .executeTakeFirst();
      return r ? toAccount(r) : null;
    },
    async create(input) {
      const now = ctx.clock.now();
      const account: AcmeAccount = {
        ...input,
        id: input.id ?? newId('acmeAccount'),
        created_at: now,
        updated_at: now,
      };
      await ctx.db
        .insertInto('acme_accounts')
        .values({ ...account, jwk: JSON.stringify(account.jwk), contact: JSON.stringify(account.contact) })
        .execute();
      return account;
    },
    async update(id, patch) {
      await updateById(
        ctx,
        'acme_accounts',
        id,
        defined({
          status: patch.status,
          contact: json(patch.contact) as string | undefined,
          jwk: json(patch.jwk) as string | undefined,
          jwk_thumbprint: patch.jwk_thumbprint,
        }),
      );
      return require(id);
    },
    list(query = {}) {
      let base = ctx.db.selectFrom('acme_accounts');
      if (query.profile_id) base = base.where('profile_id', '=', query.profile_id);
      if (query.status) base = base.where('status', '=', query.status);
      return listPage(
        base,
        query,
        (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('id'),
        toAccount,
      );
    },
  };
}

function orderRepository(ctx: Ctx): AcmeOrderRepository {
  const read = async (id: string, lock = false) => {
    const q = ctx.db.selectFrom('acme_orders').selectAll().where('id', '=', id);
    const r = await (lock ? q.forUpdate() : q).executeTakeFirst();
    return r ? toOrder(r) : null;
  };
  const get = (id: string) => read(id);
  const require = requireFound('ACME order', get);
  // PostgreSQL and PGlite answer a write with RETURNING and take data-modifying WITH; MariaDB
  // and MySQL do neither.
  const returning = ctx.flavor === 'postgres';
  return {
    get,
    lockForUpdate: lockFound(ctx, 'ACME order', (id) => read(id, true)),
    async getWithAuthorizations(id) {
      const rows = (await ctx.db
        .selectFrom('acme_orders as o')
        .leftJoin('acme_authorizations as a', 'a.order_id', 'o.id')
        .leftJoin('acme_challenges as c', 'c.authorization_id', 'a.id')
        .selectAll('o')
        .select(authzSelection)
        .select(challengeSelection)
        .where('o.id', '=', id)
        .orderBy('a.created_at')
        .orderBy('a.id')
        .orderBy('c.created_at')
        .orderBy('c.id')
        .execute()) as unknown as (Selectable<AcmeOrdersTable> & Prefixed)[];
      const first = rows[0];
      if (!first) return null;
      return { order: toOrder(first), authorizations: foldAuthorizations(rows) };
    },
    async getWithCertificate(id) {
      const r = await ctx.db
        .selectFrom('acme_orders as o')
        .leftJoin('certificate_versions as v', 'v.id', 'o.version_id')
        .selectAll('o')
        .select([
          'v.id as v_id',
          'v.issuer_id as v_issuer_id',
          'v.cert_pem as v_cert_pem',
          'v.chain_pem as v_chain_pem',
        ])
        .where('o.id', '=', id)
        .executeTakeFirst();
      if (!r) return null;
      const { v_id, v_issuer_id, v_cert_pem, v_chain_pem, ...order } = r;
      return {
        order: toOrder(order),
        certificate:
          v_id !== null && v_issuer_id !== null && v_cert_pem !== null && v_chain_pem !== null
            ? { version_id: v_id, issuer_id: v_issuer_id, cert_pem: v_cert_pem, chain_pem: v_chain_pem }
            : null,
      };
    },
    async markIssued(id, issued, now) {
      // Inside Storage.transaction the certificate this claim names usually still waits in the
      // deferred inserts (tx-storage.ts lets this call run before they are written). On
      // PostgreSQL/PGlite they go in the claim's own statement, ahead of it in a data-modifying
      // WITH (the foreign key to the certificate is checked at the statement's end, when the
      // rows are there): one statement instead of two per ACME finalize. Otherwise they are
      // written first, as before any other call of the transaction.
      const waiting = ctx.deferred?.pending ? ctx.deferred.take() : null;
      if (!waiting && ctx.deferred?.pending) await ctx.deferred.flush();
      // The WITH names add nothing the update reads: typed as the plain database.
      const db: QueryCreator<Database> = waiting
        ? (ctx.db
            .with('created', (d) => d.insertInto('certificates').values(waiting.certificates))
            .with('created_versions', (d) =>
              d.insertInto('certificate_versions').values(waiting.versions),
            ) as unknown as QueryCreator<Database>)
        : ctx.db;
      const claim = db
        .updateTable('acme_orders')
        .set({ status: 'valid', ...issued, updated_at: ctx.clock.now() })
        .where('id', '=', id)
        .where('version_id', 'is', null)
        .where((eb) =>
          eb.or([
            eb('status', '=', 'processing'),
            eb.and([eb('status', '=', 'ready'), eb('expires', '>', now)]),
          ]),
        );
      if (returning) {
        const r = await claim.returningAll().executeTakeFirst();
        return r ? toOrder(r) : null;
      }
      const res = await claim.executeTakeFirst();
      return Number(res.numUpdatedRows) === 1 ? require(id) : null;
    },
    async create(input, authorizations) {
      const now = ctx.clock.now();
      const order: AcmeOrder = {
        ...input,
        id: input.id ?? newId('acmeOrder'),
        error: null,
        certificate_id: null,
        job_id: null,
        version_id: null,
        created_at: now,
        updated_at: now,
      };
      const authzs: AcmeAuthorizationWithChallenges[] = authorizations.map((a, i) => {
        // One millisecond apart, so that reading them back by created_at keeps the given order.
        const created = new Date(now.getTime() + i);
        const { challenges, ...rest } = a;
        const id = a.id ?? newId('acmeAuthorization');
        return {
          ...rest,
          id,
          order_id: order.id,
          account_id: order.account_id,
          created_at: created,
          updated_at: created,
          challenges: challenges.map((c, j) => ({
            ...c,
            id: c.id ?? newId('acmeChallenge'),
            authorization_id: id,
            validated_at: null,
            error: null,
            created_at: new Date(created.getTime() + j),
            updated_at: created,
          })),
        };
      });
      const orderRow = { ...order, identifiers: JSON.stringify(order.identifiers), error: null };
      const authzRows = authzs.map((a) => ({
        id: a.id,
        order_id: a.order_id,
        account_id: a.account_id,
        identifier_type: a.identifier.type,
        identifier_value: a.identifier.value,
        wildcard: a.wildcard,
        status: a.status,
        expires: a.expires,
        created_at: a.created_at,
        updated_at: a.updated_at,
      }));
      const challengeRows = authzs.flatMap((a) => a.challenges).map((c) => ({ ...c, error: null }));
      if (returning && authzRows.length > 0) {
        // One statement stores all three (a statement is atomic on its own): the foreign keys
        // are checked at its end, when the rows of every part are in.
        const withOrder = ctx.db.with('o', (db) => db.insertInto('acme_orders').values(orderRow));
        if (challengeRows.length === 0)
          await withOrder.insertInto('acme_authorizations').values(authzRows).execute();
        else
          await withOrder
            .with('a', (db) => db.insertInto('acme_authorizations').values(authzRows))
            .insertInto('acme_challenges')
            .values(challengeRows)
            .execute();
        return { order, authorizations: authzs };
      }
      return atomic(ctx, async (ctx) => {
        await ctx.db.insertInto('acme_orders').values(orderRow).execute();
        if (authzRows.length > 0) await ctx.db.insertInto('acme_authorizations').values(authzRows).execute();
        if (challengeRows.length > 0)
          await ctx.db.insertInto('acme_challenges').values(challengeRows).execute();
        return { order, authorizations: authzs };
      });
    },
    async update(id, patch) {
      await updateById(
        ctx,
        'acme_orders',
        id,
        defined({
          status: patch.status,
          error: json(patch.error) as string | null | undefined,
          certificate_id: patch.certificate_id,
          job_id: patch.job_id,
          version_id: patch.version_id,
        }),
      );
      return require(id);
    },
    async invalidatePendingOfAccount(accountId) {
      const res = await ctx.db
        .updateTable('acme_orders')
        .set({ status: 'invalid', updated_at: ctx.clock.now() })
        .where('account_id', '=', accountId)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      return Number(res.numUpdatedRows);
    },
    async findByCertificate(certificateId) {
      const r = await ctx.db
        .selectFrom('acme_orders')
        .selectAll()
        .where('certificate_id', '=', certificateId)
        .executeTakeFirst();
      return r ? toOrder(r) : null;
    },
    listIdsForAccount(accountId, page = {}) {
      return listPage(
        ctx.db.selectFrom('acme_orders').where('account_id', '=', accountId),
        page,
        (q) => q.select('id').orderBy('created_at', 'desc').orderBy('id', 'desc'),
        (r) => r.id,
      );
    },
    list(query = {}) {
      let base = ctx.db.selectFrom('acme_orders');
      if (query.profile_id) base = base.where('profile_id', '=', query.profile_id);
      if (query.account_id) base = base.where('account_id', '=', query.account_id);
      if (query.status) base = base.where('status', '=', query.status);
      return listPage(base, query, (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('id'), toOrder);
    },
  };
}

function authorizationRepository(ctx: Ctx): AcmeAuthorizationRepository {
  const read = async (id: string, lock = false) => {
    const q = ctx.db.selectFrom('acme_authorizations').selectAll().where('id', '=', id);
    const r = await (lock ? q.forUpdate() : q).executeTakeFirst();
    return r ? toAuthorization(r) : null;
  };
  /** Authorizations with their challenges, one joined statement. */
  const joined = () =>
    ctx.db
      .selectFrom('acme_authorizations as a')
      .leftJoin('acme_challenges as c', 'c.authorization_id', 'a.id')
      .select(authzSelection)
      .select(challengeSelection);
  const get = async (id: string): Promise<AcmeAuthorizationWithChallenges | null> => {
    const rows = await joined().where('a.id', '=', id).orderBy('c.created_at').orderBy('c.id').execute();
    return foldAuthorizations(rows)[0] ?? null;
  };
  return {
    get,
    lockForUpdate: lockFound(ctx, 'ACME authorization', (id) => read(id, true)),
    async listForOrder(orderId) {
      const rows = await joined()
        .where('a.order_id', '=', orderId)
        .orderBy('a.created_at')
        .orderBy('a.id')
        .orderBy('c.created_at')
        .orderBy('c.id')
        .execute();
      return foldAuthorizations(rows);
    },
    async update(id, patch) {
      await updateById(ctx, 'acme_authorizations', id, defined({ status: patch.status }));
      const a = await read(id);
      if (!a) return requireFound('ACME authorization', read)(id);
      return a;
    },
    async deactivatePendingOfAccount(accountId) {
      // Through the account's orders (indexed by account), not a scan of every authorization.
      const res = await ctx.db
        .updateTable('acme_authorizations')
        .set({ status: 'deactivated', updated_at: ctx.clock.now() })
        .where('status', '=', 'pending')
        .where(
          'order_id',
          'in',
          ctx.db.selectFrom('acme_orders').select('id').where('account_id', '=', accountId),
        )
        .executeTakeFirst();
      return Number(res.numUpdatedRows);
    },
  };
}

function challengeRepository(ctx: Ctx): AcmeChallengeRepository {
  const read = async (id: string, lock = false) => {
    const q = ctx.db.selectFrom('acme_challenges').selectAll().where('id', '=', id);
    const r = await (lock ? q.forUpdate() : q).executeTakeFirst();
    return r ? toChallenge(r) : null;
  };
  const get = (id: string) => read(id);
  const require = requireFound('ACME challenge', get);
  return {
    get,
    lockForUpdate: lockFound(ctx, 'ACME challenge', (id) => read(id, true)),
    async update(id, patch) {
      await updateById(
        ctx,
        'acme_challenges',
        id,
        defined({
          status: patch.status,
          validated_at: patch.validated_at,
          error: json(patch.error) as string | null | undefined,
        }),
      );
      return require(id);
    },
  };
}

export const eabContext = (id: string) => `acme-eab:${id}`;

function eabKeyRepository(ctx: Ctx): AcmeEabKeyRepository {
  const row = (id: string) =>
    ctx.db.selectFrom('acme_eab_keys').selectAll().where('id', '=', id).executeTakeFirst();
  return {
    async get(id) {
      const r = await row(id);
      return r ? toEabKey(r) : null;
    },
    async getWithKey(id) {
      const r = await row(id);
      if (!r) return null;
      const key = Buffer.from(await ctx.box.open(r.hmac_key_sealed, eabContext(id)), 'base64');
      return { key: toEabKey(r), hmac_key: new Uint8Array(key) };
    },
    async create(input) {
      const now = ctx.clock.now();
      const key: AcmeEabKey = {
        id: input.id ?? newId('acmeEabKey'),
        profile_id: input.profile_id,
        name: input.name,
        account_id: null,
        bound_at: null,
        created_at: now,
        updated_at: now,
      };
      const hmac_key_sealed = await ctx.box.seal(
        Buffer.from(input.hmac_key).toString('base64'),
        eabContext(key.id),
      );
      await ctx.db
        .insertInto('acme_eab_keys')
        .values({ ...key, hmac_key_sealed })
        .execute();
      return key;
    },
    async bind(id, accountId, at) {
      const res = await ctx.db
        .updateTable('acme_eab_keys')
        .set({ account_id: accountId, bound_at: at, updated_at: at })
        .where('id', '=', id)
        .where('account_id', 'is', null)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) === 1;
    },
    list(query = {}) {
      let base = ctx.db.selectFrom('acme_eab_keys');
      if (query.profile_id) base = base.where('profile_id', '=', query.profile_id);
      return listPage(
        base,
        query,
        (q) =>
          q
            .select(['id', 'profile_id', 'name', 'account_id', 'bound_at', 'created_at', 'updated_at'])
            .orderBy('created_at', 'desc')
            .orderBy('id'),
        (r) => toEabKey({ ...r, hmac_key_sealed: '' }),
      );
    },
    delete: (id) => deleteById(ctx, 'acme_eab_keys', id, 'ACME EAB key'),
  };
}

export function acmeRepositories(ctx: Ctx): AcmeStorage {
  return {
    acmeAccounts: accountRepository(ctx),
    acmeOrders: orderRepository(ctx),
    acmeAuthorizations: authorizationRepository(ctx),
    acmeChallenges: challengeRepository(ctx),
    acmeEabKeys: eabKeyRepository(ctx),
  };
}
