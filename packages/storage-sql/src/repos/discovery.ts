import { createHash } from 'node:crypto';
import {
  DISCOVERED_STATUSES,
  type DiscoveredCertificate,
  type DiscoveredCertificateFilter,
  type DiscoveredCertificateRepository,
  type DiscoveredStatus,
  type DiscoveryScan,
  type DiscoveryScanRepository,
  newId,
  type ScanError,
  type ScanTarget,
  type ScanTargetRepository,
  type Sighting,
  type SightingInput,
} from '@certwright/core';
import type { Selectable, SelectQueryBuilder } from 'kysely';
import { type Ctx, count, defined, likeContains, parseJson, toBool, toNum } from '../context.js';
import type {
  Database,
  DiscoveredCertificatesTable,
  DiscoveryScansTable,
  ScanTargetsTable,
} from '../schema.js';
import { countByStatus, deleteById, listPage, requireFound, updateById } from './crud.js';

function toTarget(r: Selectable<ScanTargetsTable>): ScanTarget {
  return {
    id: r.id,
    name: r.name,
    cidrs: parseJson<string[]>(r.cidrs, []),
    hosts: parseJson<string[]>(r.hosts, []),
    ports: parseJson<number[]>(r.ports, []),
    sni_names: parseJson<string[]>(r.sni_names, []),
    interval_seconds: toNum(r.interval_seconds),
    enabled: toBool(r.enabled),
    last_scan_at: r.last_scan_at,
    next_scan_at: r.next_scan_at,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

const jsonArrays = ['cidrs', 'hosts', 'ports', 'sni_names'] as const;

export function scanTargetRepository(ctx: Ctx): ScanTargetRepository {
  const get = async (id: string) => {
    const r = await ctx.db.selectFrom('scan_targets').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? toTarget(r) : null;
  };
  const require = requireFound('scan target', get);
  return {
    get,
    require,
    async create(input) {
      const now = ctx.clock.now();
      const target: ScanTarget = {
        id: input.id ?? newId('scanTarget'),
        name: input.name,
        cidrs: input.cidrs,
        hosts: input.hosts,
        ports: input.ports,
        sni_names: input.sni_names,
        interval_seconds: input.interval_seconds,
        enabled: input.enabled,
        last_scan_at: null,
        next_scan_at: input.next_scan_at ?? null,
        created_at: now,
        updated_at: now,
      };
      await ctx.db
        .insertInto('scan_targets')
        .values({
          ...target,
          cidrs: JSON.stringify(target.cidrs),
          hosts: JSON.stringify(target.hosts),
          ports: JSON.stringify(target.ports),
          sni_names: JSON.stringify(target.sni_names),
        })
        .execute();
      return target;
    },
    async update(id, patch) {
      await require(id);
      const values: Record<string, unknown> = { ...defined(patch) };
      for (const key of jsonArrays) if (patch[key] !== undefined) values[key] = JSON.stringify(patch[key]);
      await updateById(ctx, 'scan_targets', id, values);
      return require(id);
    },
    delete: (id) => deleteById(ctx, 'scan_targets', id, 'scan target'),
    async list(query = {}) {
      let base = ctx.db.selectFrom('scan_targets');
      if (query.enabled !== undefined) base = base.where('enabled', '=', query.enabled);
      return listPage(base, query, (q) => q.selectAll().orderBy('name').orderBy('id'), toTarget);
    },
    async due(now, limit) {
      const rows = await ctx.db
        .selectFrom('scan_targets')
        .selectAll()
        .where('enabled', '=', true)
        .where('interval_seconds', '>', 0)
        .where('next_scan_at', 'is not', null)
        .where('next_scan_at', '<=', now)
        .orderBy('next_scan_at')
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map(toTarget);
    },
  };
}

function toScan(r: Selectable<DiscoveryScansTable>): DiscoveryScan {
  return {
    id: r.id,
    target_id: r.target_id,
    source: r.source,
    status: r.status as DiscoveryScan['status'],
    started_at: r.started_at,
    finished_at: r.finished_at,
    endpoints_total: toNum(r.endpoints_total),
    endpoints_tls: toNum(r.endpoints_tls),
    certificates_found: toNum(r.certificates_found),
    certificates_new: toNum(r.certificates_new),
    errors_count: toNum(r.errors_count),
    errors: parseJson<ScanError[]>(r.errors, []),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function discoveryScanRepository(ctx: Ctx): DiscoveryScanRepository {
  const get = async (id: string) => {
    const r = await ctx.db.selectFrom('discovery_scans').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? toScan(r) : null;
  };
  const require = requireFound('scan', get);
  return {
    get,
    require,
    async create(input) {
      const now = ctx.clock.now();
      const scan: DiscoveryScan = {
        id: input.id ?? newId('discoveryScan'),
        target_id: input.target_id,
        source: input.source,
        status: 'running',
        started_at: input.started_at,
        finished_at: null,
        endpoints_total: 0,
        endpoints_tls: 0,
        certificates_found: 0,
        certificates_new: 0,
        errors_count: 0,
        errors: [],
        created_at: now,
        updated_at: now,
      };
      await ctx.db
        .insertInto('discovery_scans')
        .values({ ...scan, errors: '[]' })
        .execute();
      return scan;
    },
    async update(id, patch) {
      await require(id);
      const { errors, ...rest } = patch;
      await updateById(ctx, 'discovery_scans', id, {
        ...defined(rest),
        ...(errors !== undefined ? { errors: JSON.stringify(errors) } : {}),
      });
      return require(id);
    },
    async list(query = {}) {
      let base = ctx.db.selectFrom('discovery_scans');
      if (query.target_id !== undefined) base = base.where('target_id', '=', query.target_id);
      if (query.status !== undefined) base = base.where('status', '=', query.status);
      if (query.source !== undefined) base = base.where('source', '=', query.source);
      return listPage(
        base,
        query,
        (q) => q.selectAll().orderBy('started_at', 'desc').orderBy('id', 'desc'),
        toScan,
      );
    },
    async failStale(before, at) {
      const res = await ctx.db
        .updateTable('discovery_scans')
        .set({ status: 'failed', finished_at: at, updated_at: ctx.clock.now() })
        .where('status', '=', 'running')
        .where('started_at', '<', before)
        .executeTakeFirst();
      return Number(res.numUpdatedRows);
    },
  };
}

type DiscoveredQuery = SelectQueryBuilder<Database, 'discovered_certificates', object>;

function filterDiscovered(ctx: Ctx, f: DiscoveredCertificateFilter): DiscoveredQuery {
  let q: DiscoveredQuery = ctx.db.selectFrom('discovered_certificates');
  if (f.status !== undefined) q = q.where('status', '=', f.status);
  if (f.issuer !== undefined)
    q = q.where((eb) => eb(eb.fn('lower', ['issuer']), 'like', likeContains(f.issuer!)));
  if (f.expires_before !== undefined) q = q.where('not_after', '<', f.expires_before);
  if (f.expires_after !== undefined) q = q.where('not_after', '>=', f.expires_after);
  if (f.search !== undefined) {
    const like = likeContains(f.search);
    q = q.where((eb) =>
      eb.or([eb(eb.fn('lower', ['subject']), 'like', like), eb(eb.fn('lower', ['sans']), 'like', like)]),
    );
  }
  if (
    f.seen_address !== undefined ||
    f.seen_port !== undefined ||
    f.source !== undefined ||
    f.scan_id !== undefined
  ) {
    q = q.where('id', 'in', (eb) => {
      let s = eb.selectFrom('discovery_sightings').select('discovered_id');
      if (f.seen_address !== undefined)
        s = s.where((w) => w.or([w('address', '=', f.seen_address!), w('path', '=', f.seen_address!)]));
      if (f.seen_port !== undefined) s = s.where('port', '=', f.seen_port);
      if (f.source !== undefined) s = s.where('source', '=', f.source);
      if (f.scan_id !== undefined) s = s.where('scan_id', '=', f.scan_id);
      return s;
    });
  }
  return q;
}

const locationKey = (s: SightingInput): string =>
  createHash('sha256')
    .update(JSON.stringify([s.source, s.address, s.port, s.sni, s.path]))
    .digest('hex');

export function discoveredCertificateRepository(ctx: Ctx): DiscoveredCertificateRepository {
  async function sightingsOf(ids: readonly string[]): Promise<Map<string, Sighting[]>> {
    const out = new Map<string, Sighting[]>();
    if (ids.length === 0) return out;
    const rows = await ctx.db
      .selectFrom('discovery_sightings')
      .selectAll()
      .where('discovered_id', 'in', ids)
      .orderBy('last_seen_at', 'desc')
      .execute();
    for (const r of rows) {
      const list = out.get(r.discovered_id) ?? [];
      // The newest 50 places per certificate; a wildcard certificate on thousands of hosts
      // stays listable (the sighting filter still matches every place).
      if (list.length < 50) {
        list.push({
          source: r.source,
          scan_id: r.scan_id,
          address: r.address,
          port: r.port === null ? null : toNum(r.port),
          sni: r.sni,
          path: r.path,
          first_seen_at: r.first_seen_at,
          last_seen_at: r.last_seen_at,
        });
      }
      out.set(r.discovered_id, list);
    }
    return out;
  }
  const toRecord = (
    r: Selectable<DiscoveredCertificatesTable>,
    sightings: Sighting[],
  ): DiscoveredCertificate => ({
    id: r.id,
    fingerprint_sha256: r.fingerprint_sha256,
    subject: r.subject,
    issuer: r.issuer,
    serial_number: r.serial_number,
    sans: parseJson<string[]>(r.sans, []),
    not_before: r.not_before,
    not_after: r.not_after,
    key_algorithm: r.key_algorithm,
    key_size: toNum(r.key_size),
    signature_algorithm: r.signature_algorithm,
    self_signed: toBool(r.self_signed),
    cert_pem: r.cert_pem,
    chain_pem: r.chain_pem,
    status: r.status as DiscoveredStatus,
    certificate_id: r.certificate_id,
    first_seen_at: r.first_seen_at,
    last_seen_at: r.last_seen_at,
    sightings,
    created_at: r.created_at,
    updated_at: r.updated_at,
  });
  async function withSightings(
    rows: Selectable<DiscoveredCertificatesTable>[],
  ): Promise<DiscoveredCertificate[]> {
    const s = await sightingsOf(rows.map((r) => r.id));
    return rows.map((r) => toRecord(r, s.get(r.id) ?? []));
  }
  const getBy = async (column: 'id' | 'fingerprint_sha256', value: string) => {
    const r = await ctx.db
      .selectFrom('discovered_certificates')
      .selectAll()
      .where(column, '=', value)
      .executeTakeFirst();
    return r ? (await withSightings([r]))[0]! : null;
  };
  const get = (id: string) => getBy('id', id);
  const require = requireFound('discovered certificate', get);
  return {
    get,
    require,
    getByFingerprint: (fp) => getBy('fingerprint_sha256', fp),
    async record(cert, sighting, certificateId) {
      const now = ctx.clock.now();
      const id = newId('discoveredCertificate');
      const row = {
        ...cert,
        id,
        sans: JSON.stringify(cert.sans),
        status: certificateId ? 'managed' : 'unmanaged',
        certificate_id: certificateId ?? null,
        first_seen_at: sighting.seen_at,
        last_seen_at: sighting.seen_at,
        created_at: now,
        updated_at: now,
      };
      // Insert-or-nothing keyed on the fingerprint, so two scanners seeing one certificate at
      // once converge on one record without a failed statement aborting anybody's transaction.
      const insert = ctx.db.insertInto('discovered_certificates').values(row);
      const res =
        ctx.flavor === 'postgres'
          ? await insert.onConflict((oc) => oc.column('fingerprint_sha256').doNothing()).executeTakeFirst()
          : await insert.ignore().executeTakeFirst();
      const created = Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
      const existing = await ctx.db
        .selectFrom('discovered_certificates')
        .select(['id', 'certificate_id', 'status', 'last_seen_at'])
        .where('fingerprint_sha256', '=', cert.fingerprint_sha256)
        .executeTakeFirstOrThrow();
      if (!created) {
        const link = certificateId && !existing.certificate_id;
        await ctx.db
          .updateTable('discovered_certificates')
          .set({
            ...(existing.last_seen_at < sighting.seen_at ? { last_seen_at: sighting.seen_at } : {}),
            ...(link
              ? {
                  certificate_id: certificateId,
                  ...(existing.status === 'unmanaged' ? { status: 'managed' } : {}),
                }
              : {}),
            updated_at: now,
          })
          .where('id', '=', existing.id)
          .execute();
      }
      const key = locationKey(sighting);
      const place = {
        discovered_id: existing.id,
        location_key: key,
        source: sighting.source,
        scan_id: sighting.scan_id,
        address: sighting.address,
        port: sighting.port,
        sni: sighting.sni,
        path: sighting.path,
        first_seen_at: sighting.seen_at,
        last_seen_at: sighting.seen_at,
      };
      const refresh = { scan_id: sighting.scan_id, last_seen_at: sighting.seen_at };
      const upsert = ctx.db.insertInto('discovery_sightings').values(place);
      if (ctx.flavor === 'postgres') {
        await upsert
          .onConflict((oc) => oc.columns(['discovered_id', 'location_key']).doUpdateSet(refresh))
          .execute();
      } else {
        await upsert.onDuplicateKeyUpdate(refresh).execute();
      }
      return { record: (await get(existing.id))!, created };
    },
    async update(id, patch) {
      await require(id);
      await updateById(ctx, 'discovered_certificates', id, defined(patch));
      return require(id);
    },
    async list(query = {}) {
      const page = await listPage(filterDiscovered(ctx, query), query, (q) =>
        q.selectAll().orderBy('not_after').orderBy('id'),
      );
      return { items: await withSightings(page.items), total: page.total };
    },
    async count(filter = {}) {
      return count(
        await filterDiscovered(ctx, filter)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirst(),
      );
    },
    countByStatus() {
      return countByStatus(ctx, 'discovered_certificates', DISCOVERED_STATUSES);
    },
    async countByIssuer(limit) {
      const rows = await ctx.db
        .selectFrom('discovered_certificates')
        .select(['issuer', (eb) => eb.fn.countAll().as('n')])
        .where('status', '!=', 'dismissed')
        .groupBy('issuer')
        .orderBy('n', 'desc')
        .orderBy('issuer')
        .limit(limit)
        .execute();
      return rows.map((r) => ({ issuer: r.issuer, count: count(r) }));
    },
    async findManagedByFingerprint(fingerprint) {
      const r = await ctx.db
        .selectFrom('certificate_versions')
        .select(['id', 'certificate_id'])
        .where('fingerprint_sha256', '=', fingerprint)
        .orderBy('created_at', 'desc')
        .executeTakeFirst();
      return r ? { certificate_id: r.certificate_id, version_id: r.id } : null;
    },
  };
}
