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
import { type Insertable, type Selectable, sql } from 'kysely';
import { atomic, type Ctx, count, pageWindow, toNum } from '../context.js';
import type { CertificateVersionsTable } from '../schema.js';
import { newCertificateRow } from './certificates.js';

type Row = Selectable<CertificateVersionsTable>;

const keyContext = (versionId: string) => `certificate_version:${versionId}:private_key`;

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

    async *streamRevokedEntries(issuerId, pageSize = 50_000) {
      if (!(pageSize >= 1)) throw new CertwrightError('bad_request', 'pageSize must be at least 1');
      let after: string | undefined;
      for (;;) {
        // Keyset pages in serial order; four columns only, which ix_versions_crl covers.
        const base = ctx.db
          .selectFrom('certificate_versions')
          .where('issuer_id', '=', issuerId)
          .where('revoked_at', 'is not', null)
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
  };
}
