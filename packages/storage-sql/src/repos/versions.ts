import {
  type CertificateVersion,
  type CertificateVersionRepository,
  CertwrightError,
  type NewCertificateVersion,
  newId,
  notFound,
  type Revocation,
  type RevocationReason,
  type RevokedEntry,
} from '@certwright/core';
import { encodeCrlEntry } from '@certwright/core/pki';
import { type Insertable, type Selectable, sql } from 'kysely';
import { atomic, type Ctx, count, pageWindow, toBool, toNum } from '../context.js';
import type { CertificateVersionsTable } from '../schema.js';
import { newCertificateRow } from './certificates.js';

// The stored CRL entry DER is internal to the CRL read; versions never carry it.
type Row = Omit<Selectable<CertificateVersionsTable>, 'crl_entry'>;

export const keyContext = (versionId: string) => `certificate_version:${versionId}:private_key`;

/** The columns a revocation sets on a version row. */
function revocationColumns(revocation: Revocation) {
  return {
    revoked_at: revocation.revoked_at,
    revocation_reason: revocation.reason,
    invalidity_date: revocation.invalidity_date ?? null,
  };
}

function toVersion(r: Row): CertificateVersion {
  return {
    id: r.id,
    certificate_id: r.certificate_id,
    issuer_id: r.issuer_id,
    serial_number: r.serial_number,
    fingerprint_sha256: r.fingerprint_sha256,
    key_algorithm: r.key_algorithm,
    key_size: toNum(r.key_size),
    subject: r.subject,
    issued_at: r.issued_at,
    not_before: r.not_before,
    not_after: r.not_after,
    csr_pem: r.csr_pem,
    cert_pem: r.cert_pem,
    chain_pem: r.chain_pem,
    revoked_at: r.revoked_at,
    revocation_reason: r.revocation_reason as RevocationReason | null,
    invalidity_date: r.invalidity_date,
    created_at: r.created_at,
  };
}

// Every column but the sealed key, so ordinary reads never carry key material.
const PUBLIC_COLUMNS = [
  'id',
  'certificate_id',
  'issuer_id',
  'serial_number',
  'fingerprint_sha256',
  'key_algorithm',
  'key_size',
  'subject',
  'issued_at',
  'not_before',
  'not_after',
  'csr_pem',
  'cert_pem',
  'chain_pem',
  'revoked_at',
  'revocation_reason',
  'invalidity_date',
  'created_at',
] as const;

/** A new version as `create` stores it, and its row (the private key sealed). */
async function newVersionRow(
  ctx: Ctx,
  input: NewCertificateVersion,
): Promise<{ version: CertificateVersion; row: Insertable<CertificateVersionsTable> }> {
  const id = input.id ?? newId('version');
  const version: CertificateVersion = {
    id,
    certificate_id: input.certificate_id,
    issuer_id: input.issuer_id,
    serial_number: input.serial_number.toLowerCase(),
    fingerprint_sha256: input.fingerprint_sha256.toLowerCase(),
    key_algorithm: input.key_algorithm,
    key_size: input.key_size,
    subject: input.subject,
    issued_at: input.issued_at,
    not_before: input.not_before,
    not_after: input.not_after,
    csr_pem: input.csr_pem,
    cert_pem: input.cert_pem,
    chain_pem: input.chain_pem,
    revoked_at: null,
    revocation_reason: null,
    invalidity_date: null,
    created_at: input.created_at ?? ctx.clock.now(),
  };
  const sealed = input.private_key_pem ? await ctx.box.seal(input.private_key_pem, keyContext(id)) : null;
  return { version, row: { ...version, private_key_sealed: sealed } };
}

export function versionRepository(ctx: Ctx): CertificateVersionRepository {
  const get = async (id: string) => {
    const row = await ctx.db
      .selectFrom('certificate_versions')
      .select(PUBLIC_COLUMNS)
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toVersion({ ...row, private_key_sealed: null }) : null;
  };

  return {
    get,

    async create(input) {
      const { version, row } = await newVersionRow(ctx, input);
      // The certificate's updated_at is the version's created_at unless that was given (an
      // import of an older version): enrollment relies on it to know the row without a read.
      const touched = {
        current_version_id: version.id,
        expires_at: version.not_after,
        updated_at: input.created_at ? ctx.clock.now() : version.created_at,
      };
      if (ctx.flavor === 'postgres') {
        // One statement: the version and the certificate pointing at it, through a data-modifying WITH.
        const res = await ctx.db
          .with('inserted', (db) => db.insertInto('certificate_versions').values(row))
          .updateTable('certificates')
          .set(touched)
          .where('id', '=', version.certificate_id)
          .executeTakeFirst();
        if (Number(res.numUpdatedRows) === 0) throw notFound('certificate', version.certificate_id);
        return version;
      }
      await atomic(ctx, async (c) => {
        await c.db.insertInto('certificate_versions').values(row).execute();
        const res = await c.db
          .updateTable('certificates')
          .set(touched)
          .where('id', '=', version.certificate_id)
          .executeTakeFirst();
        if (Number(res.numUpdatedRows) === 0) throw notFound('certificate', version.certificate_id);
      });
      return version;
    },

    async createWithCertificate(certificateInput, versionInput) {
      const now = ctx.clock.now();
      const versionId = versionInput.id ?? newId('version');
      const { certificate, row: certificateRow } = newCertificateRow(
        { ...certificateInput, created_at: certificateInput.created_at ?? now },
        now,
        { current_version_id: versionId, expires_at: versionInput.not_after },
      );
      const { version, row } = await newVersionRow(ctx, {
        ...versionInput,
        id: versionId,
        certificate_id: certificate.id,
        created_at: versionInput.created_at ?? now,
      });
      if (ctx.deferred) {
        // Inside Storage.transaction: written with the transaction's other new certificates.
        ctx.deferred.add(certificateRow, row);
      } else if (ctx.flavor === 'postgres') {
        // One statement: the certificate, already pointing at its version, and the version.
        await ctx.db
          .with('created', (db) => db.insertInto('certificates').values(certificateRow))
          .insertInto('certificate_versions')
          .values(row)
          .execute();
      } else {
        await atomic(ctx, async (c) => {
          await c.db.insertInto('certificates').values(certificateRow).execute();
          await c.db.insertInto('certificate_versions').values(row).execute();
        });
      }
      return { certificate, version };
    },

    async getWithKey(id) {
      const row = await ctx.db
        .selectFrom('certificate_versions')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst();
      if (!row) return null;
      const private_key_pem = row.private_key_sealed
        ? await ctx.box.open(row.private_key_sealed, keyContext(id))
        : null;
      return { ...toVersion(row), private_key_pem };
    },

    async hasPrivateKey(id) {
      const row = await ctx.db
        .selectFrom('certificate_versions')
        // The sealed key itself is not read, only whether there is one.
        .select((eb) => eb('private_key_sealed', 'is not', null).as('held'))
        .where('id', '=', id)
        .executeTakeFirst();
      return toBool(row?.held);
    },

    async latest(certificateId) {
      const row = await ctx.db
        .selectFrom('certificate_versions')
        .select(PUBLIC_COLUMNS)
        .where('certificate_id', '=', certificateId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
      return row ? toVersion({ ...row, private_key_sealed: null }) : null;
    },

    async listForCertificate(certificateId, page) {
      const { limit, offset } = pageWindow(page);
      const total = await ctx.db
        .selectFrom('certificate_versions')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('certificate_id', '=', certificateId)
        .executeTakeFirst();
      const rows = await ctx.db
        .selectFrom('certificate_versions')
        .select(PUBLIC_COLUMNS)
        .where('certificate_id', '=', certificateId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .offset(offset)
        .execute();
      return { items: rows.map((r) => toVersion({ ...r, private_key_sealed: null })), total: count(total) };
    },

    async findBySerial(issuerId, serialNumber) {
      const row = await ctx.db
        .selectFrom('certificate_versions')
        .select(PUBLIC_COLUMNS)
        .where('issuer_id', '=', issuerId)
        .where('serial_number', '=', serialNumber.toLowerCase())
        .executeTakeFirst();
      return row ? toVersion({ ...row, private_key_sealed: null }) : null;
    },

    async revoke(id, revocation) {
      return atomic(ctx, async (c) => {
        await c.db
          .updateTable('certificate_versions')
          .set(revocationColumns(revocation))
          .where('id', '=', id)
          .where('revoked_at', 'is', null)
          .execute();
        const after = await versionRepository(c).get(id);
        if (!after) throw notFound('certificate version', id);
        return after;
      });
    },

    async revokeForCertificates(certificateIds, revocation) {
      if (certificateIds.length === 0) return 0;
      const res = await ctx.db
        .updateTable('certificate_versions')
        .set(revocationColumns(revocation))
        .where('certificate_id', 'in', certificateIds)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(res.numUpdatedRows);
    },

    async *streamRevoked(issuerId, pageSize = 1000) {
      if (!(pageSize >= 1)) throw new CertwrightError('bad_request', 'pageSize must be at least 1');
      let after: string | undefined;
      for (;;) {
        let q = ctx.db
          .selectFrom('certificate_versions')
          .select(PUBLIC_COLUMNS)
          .where('issuer_id', '=', issuerId)
          .where('revoked_at', 'is not', null);
        if (after !== undefined) q = q.where('serial_number', '>', after);
        const rows = await q.orderBy('serial_number').limit(pageSize).execute();
        for (const r of rows) yield toVersion({ ...r, private_key_sealed: null });
        if (rows.length < pageSize) return;
        after = rows[rows.length - 1]?.serial_number;
      }
    },

    async *streamRevokedEntries(issuerId, pageSize = 50_000, options = {}) {
      const since = options.revokedSince;
      if (!(pageSize >= 1)) throw new CertwrightError('bad_request', 'pageSize must be at least 1');
      let after: string | undefined;
      for (;;) {
        // Keyset pages in serial order; four columns only, which ix_versions_crl covers.
        const base = ctx.db
          .selectFrom('certificate_versions')
          .where('issuer_id', '=', issuerId)
          .where('revoked_at', 'is not', null)
          .$if(since !== undefined, (q) => q.where('revoked_at', '>=', since!))
          .$if(after !== undefined, (q) => q.where('serial_number', '>', after!))
          .orderBy('serial_number')
          .limit(pageSize);
        let page: RevokedEntry[];
        if (ctx.flavor === 'postgres') {
          // Times as epoch milliseconds (float8): a number per row instead of a timestamp text
          // the driver parses into a Date, which is most of the client's work at a million rows.
          const rows = await base
            .select([
              'serial_number',
              'revocation_reason',
              sql<number>`(extract(epoch from revoked_at) * 1000)::float8`.as('revoked_ms'),
              sql<number | null>`(extract(epoch from invalidity_date) * 1000)::float8`.as('invalidity_ms'),
            ])
            .execute();
          page = new Array<RevokedEntry>(rows.length);
          for (let i = 0; i < rows.length; i++) {
            const r = rows[i]!;
            page[i] = {
              serial_number: r.serial_number,
              revoked_at: new Date(Math.round(Number(r.revoked_ms))),
              revocation_reason: r.revocation_reason,
              invalidity_date:
                r.invalidity_ms === null ? null : new Date(Math.round(Number(r.invalidity_ms))),
            };
          }
        } else {
          page = (await base
            .select(['serial_number', 'revoked_at', 'revocation_reason', 'invalidity_date'])
            .execute()) as RevokedEntry[];
        }
        if (page.length > 0) yield page;
        if (page.length < pageSize) return;
        after = page[page.length - 1]?.serial_number;
      }
    },

    async *streamCrlEntryBlocks(issuerId, pageSize = 50_000) {
      if (!(pageSize >= 1)) throw new CertwrightError('bad_request', 'pageSize must be at least 1');
      let after: string | undefined;
      for (;;) {
        let page = await crlEntryPage(ctx, issuerId, after, pageSize);
        // Versions revoked since the last build (or before migration 0018) have no DER yet:
        // encode and store them, then read the page again. A revocation committing meanwhile
        // may add another such row to the page; each round stores every one it saw.
        while (page.missing > 0) {
          await storeMissingCrlEntries(ctx, issuerId, after, page.last);
          page = await crlEntryPage(ctx, issuerId, after, pageSize);
        }
        if (page.count > 0) yield page.block;
        if (page.count < pageSize) return;
        after = page.last;
      }
    },
  };
}

interface CrlEntryPage {
  /** The stored entry DER of the page's rows, concatenated. */
  block: Uint8Array;
  /** Revoked rows in the page, and how many of them have no stored DER. */
  count: number;
  missing: number;
  /** The page's highest serial (the keyset cursor). */
  last: string;
}

/**
 * One keyset page of revoked versions in serial order, over ix_versions_crl_entries. On
 * PostgreSQL/PGlite the database concatenates the page (one bytea instead of 50,000 rows for
 * the driver to turn into objects); string_agg keeps the subquery's order in practice, and the
 * order of CRL entries carries no meaning anyway (RFC 5280 §5.1.2.6). MySQL's group_concat
 * would need a session-wide length limit raised, so there the rows are joined here.
 */
async function crlEntryPage(
  ctx: Ctx,
  issuerId: string,
  after: string | undefined,
  pageSize: number,
): Promise<CrlEntryPage> {
  const rows = ctx.db
    .selectFrom('certificate_versions')
    .select(['serial_number', 'crl_entry'])
    .where('issuer_id', '=', issuerId)
    .where('revoked_at', 'is not', null)
    .$if(after !== undefined, (q) => q.where('serial_number', '>', after!))
    .orderBy('serial_number')
    .limit(pageSize);
  if (ctx.flavor === 'postgres') {
    const row = await ctx.db
      .selectFrom(rows.as('p'))
      .select([
        sql<Uint8Array | null>`string_agg(p.crl_entry, ''::bytea)`.as('block'),
        sql<string | null>`max(p.serial_number)`.as('last'),
        sql<number | string>`count(*)`.as('n'),
        sql<number | string>`count(p.crl_entry)`.as('filled'),
      ])
      .executeTakeFirstOrThrow();
    const n = toNum(row.n);
    return {
      block: row.block ?? new Uint8Array(0),
      count: n,
      missing: n - toNum(row.filled),
      last: row.last ?? '',
    };
  }
  const list = await rows.execute();
  const parts: Uint8Array[] = [];
  for (const r of list) if (r.crl_entry) parts.push(r.crl_entry);
  return {
    block: Buffer.concat(parts),
    count: list.length,
    missing: list.length - parts.length,
    last: list[list.length - 1]?.serial_number ?? '',
  };
}

/** Rows per UPDATE when storing entry DER: the CASE is matched branch by branch, so it stays short. */
const STORE_BATCH = 250;

/**
 * Encodes and stores the entry DER of the revoked versions in (after, last] that have none.
 * One UPDATE per batch, a CASE on the id; `else crl_entry` also gives the parameters their
 * type on PostgreSQL. The UPDATE does not re-check for null: a concurrent writer can only have
 * stored the same bytes (the columns never change once revoked), and writing them again keeps
 * the rows visible to this transaction's snapshot on MySQL, whose re-read would otherwise still
 * see them missing.
 */
async function storeMissingCrlEntries(
  ctx: Ctx,
  issuerId: string,
  after: string | undefined,
  last: string,
): Promise<void> {
  const rows = await ctx.db
    .selectFrom('certificate_versions')
    .select(['id', 'serial_number', 'revoked_at', 'revocation_reason', 'invalidity_date'])
    .where('issuer_id', '=', issuerId)
    .where('revoked_at', 'is not', null)
    .where('crl_entry', 'is', null)
    .$if(after !== undefined, (q) => q.where('serial_number', '>', after!))
    .where('serial_number', '<=', last)
    .execute();
  for (let from = 0; from < rows.length; from += STORE_BATCH) {
    const batch = rows.slice(from, from + STORE_BATCH).map((r) => ({
      id: r.id,
      der: encodeCrlEntry({
        serial: r.serial_number,
        revokedAt: r.revoked_at!,
        reason: (r.revocation_reason || undefined) as RevocationReason | undefined,
        invalidityDate: r.invalidity_date ?? undefined,
      }),
    }));
    const cases = sql.join(
      batch.map((b) => sql`when ${b.id} then ${b.der}`),
      sql` `,
    );
    await ctx.db
      .updateTable('certificate_versions')
      .set({ crl_entry: sql`case id ${cases} else crl_entry end` })
      .where(
        'id',
        'in',
        batch.map((b) => b.id),
      )
      .execute();
  }
}
