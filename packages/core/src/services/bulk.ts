import { z } from 'zod';
import {
  type CertificateSource,
  type CertificateStatus,
  certificateSourceSchema,
  type ManagedCertificate,
  type RevocationReason,
  revocationReasonSchema,
} from '../domain/certificate.js';
import { idSchema } from '../domain/common.js';
import { validationError } from '../errors.js';
import type { CertificateFilter, Storage } from '../ports/storage.js';
import type { AuditService } from './audit.js';
import type { Actor, ServiceDeps } from './context.js';
import { invalidReference, parseInput } from './input.js';
import type { IssuanceJobOpener } from './issuance/open-job.js';
import { REVOCATION_BATCH, RevocationNotices, type RevocationService } from './revocation.js';

/** Most ids one bulk request may list; bigger sets are selected with filter criteria. */
export const MAX_BULK_IDS = 10_000;
const BATCH = REVOCATION_BATCH;

const filterFields = {
  profile_id: idSchema.optional(),
  owner_id: idSchema.optional(),
  agent_id: idSchema.optional().describe('certificates bound to a target of this agent'),
  issuer_id: idSchema.optional(),
  team_id: idSchema.optional(),
  certificate_ids: z.array(idSchema).max(MAX_BULK_IDS).optional(),
  source: certificateSourceSchema.optional().describe('"" means any source; never enough on its own'),
};

/** All criteria optional, at least one required; criteria combine with AND. */
export const bulkRenewSchema = z.object(filterFields);
export const bulkRevokeSchema = z.object({
  ...filterFields,
  reason: revocationReasonSchema.optional().describe('RFC 5280 reason name; default unspecified'),
});
const reassignIds = z.array(idSchema).min(1).max(MAX_BULK_IDS);
/** `ids` (the name the bulk operations' table uses) or `certificate_ids` (the earlier name): one of them. */
export const bulkReassignSchema = z.object({
  ids: reassignIds.optional().describe('the certificates to reassign; or give them as certificate_ids'),
  certificate_ids: reassignIds.optional().describe('the same as ids, under its earlier name'),
  owner_id: idSchema,
  team_id: idSchema.optional(),
});
export type BulkRevokeRequest = z.input<typeof bulkRevokeSchema>;
export type BulkRenewRequest = z.input<typeof bulkRenewSchema>;
export type BulkReassignRequest = z.input<typeof bulkReassignSchema>;

export interface BulkError {
  certificate_id: string;
  error: string;
  message: string;
}

export interface BulkRevokeResult {
  /** Certificates the criteria select, revoked ones included. */
  total_matched: number;
  total_revoked: number;
  /** Already revoked: left as they were. */
  total_skipped: number;
  total_failed: number;
  errors: BulkError[];
}

export interface BulkRenewResult {
  total_matched: number;
  total_renewed: number;
  /** Archived, Revoked, Expired or RenewalInProgress: silently skipped. */
  total_skipped: number;
  total_failed: number;
  errors: BulkError[];
  enqueued_jobs: { certificate_id: string; job_id: string }[];
}

export interface BulkReassignResult {
  total_requested: number;
  total_reassigned: number;
  total_failed: number;
  errors: BulkError[];
}

/** Statuses bulk renewal leaves alone. */
export const BULK_RENEW_SKIPS: readonly CertificateStatus[] = [
  'Archived',
  'Revoked',
  'Expired',
  'RenewalInProgress',
];

/**
 * Bulk operations. Each call is one transaction — all or nothing —
 * whose statements each cover a batch of up to 500 certificates (keyset-paged ids, one UPDATE
 * per batch), and writes exactly one audit event.
 */
export class BulkService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
    private readonly revocation: RevocationService,
    private readonly jobs: IssuanceJobOpener,
  ) {}

  /** `est: true` is the EST variant: source forced to EST, audited as `est_bulk_revoke`. */
  async revoke(
    actor: Actor,
    input: BulkRevokeRequest,
    options: { est?: boolean } = {},
  ): Promise<BulkRevokeResult> {
    const data = parseInput(bulkRevokeSchema, input);
    if (options.est) data.source = 'EST';
    const filter = criteriaFilter(data);
    const reason: RevocationReason = data.reason ?? 'unspecified';
    const { result, issuerIds, revokedIds, byIssuer } = await this.deps.storage.transaction(async (tx) => {
      const errors = await unknownIds(tx, data.certificate_ids);
      const alreadyRevoked = (await tx.certificates.list({ ...filter, status: 'Revoked', perPage: 1 })).total;
      const selection: CertificateFilter = { ...filter, notStatus: ['Revoked'] };
      // The issuers the listeners must hear about, found before the writes with one probe per
      // issuer rather than by reading every selected certificate back.
      const issuers = await affectedIssuers(tx, selection);
      const at = this.deps.clock.now();
      let revoked = 0;
      const revokedIds: string[] = [];
      const byIssuer: Record<string, number> = {};
      const notices = new RevocationNotices();
      await eachBatch(tx, selection, async (ids) => {
        // One read per batch for the owners' notifications (names and owners of these ids).
        const items = (await tx.certificates.list({ ids, perPage: ids.length })).items;
        notices.add(items);
        for (const c of items) byIssuer[c.issuer_id] = (byIssuer[c.issuer_id] ?? 0) + 1;
        await this.revocation.revokeSelected(tx, ids, reason, at);
        revoked += ids.length;
        revokedIds.push(...ids);
      });
      await this.revocation.raiseNotices(tx, notices, reason);
      const result: BulkRevokeResult = {
        total_matched: revoked + alreadyRevoked,
        total_revoked: revoked,
        total_skipped: alreadyRevoked,
        total_failed: errors.length,
        errors,
      };
      await this.audit.record(
        actor,
        bulkEvent(options.est ? 'est_bulk_revoke' : 'certificates_bulk_revoked', { ...data, reason }, result),
        tx,
      );
      return { result, issuerIds: issuers, revokedIds, byIssuer };
    });
    this.revocation.reportRevoked(byIssuer);
    await this.revocation.notify({
      issuer_ids: issuerIds,
      revoked: result.total_revoked,
      reason,
      certificate_ids: revokedIds,
    });
    return result;
  }

  /**
   * Selected certificates not in a skipped status become RenewalInProgress and get a Renewal
   * job each through the same opener as single renewal and the renewal scan (AwaitingCSR and
   * addressed to the certificate's agent when its profile generates keys on the agent, Pending
   * otherwise; max_attempts from the renewal policy; an open Renewal job is reused). A
   * certificate whose issuer is disabled is not renewed: it is reported as `issuer_disabled`.
   */
  async renew(actor: Actor, input: BulkRenewRequest): Promise<BulkRenewResult> {
    const data = parseInput(bulkRenewSchema, input);
    const filter = criteriaFilter(data);
    return this.deps.storage.transaction(async (tx) => {
      const errors = await unknownIds(tx, data.certificate_ids);
      const skipped = (await tx.certificates.list({ ...filter, status: [...BULK_RENEW_SKIPS], perPage: 1 }))
        .total;
      const disabled = await disabledIssuers(tx);
      // Read once: the jobs this call opens belong to certificates it has already passed.
      const openJobs = await this.jobs.openJobsByCertificate(tx, 'Renewal');
      const enqueued: BulkRenewResult['enqueued_jobs'] = [];
      let refused = 0;
      await eachBatch(tx, { ...filter, notStatus: [...BULK_RENEW_SKIPS] }, async (ids) => {
        const page = await tx.certificates.list({ ids, perPage: BATCH });
        const renewable: ManagedCertificate[] = [];
        for (const c of page.items) {
          if (!disabled.has(c.issuer_id)) {
            renewable.push(c);
            continue;
          }
          refused += 1;
          errors.push({
            certificate_id: c.id,
            error: 'issuer_disabled',
            message: `issuer '${c.issuer_id}' is disabled: it signs no certificate`,
          });
        }
        if (renewable.length === 0) return;
        await tx.certificates.updateMany(
          renewable.map((c) => c.id),
          { status: 'RenewalInProgress' },
        );
        const opened = await this.jobs.openMany(tx, renewable, 'Renewal', {
          payload: { trigger: 'bulk_renew' },
          openJobs,
        });
        enqueued.push(
          ...opened.map(({ job }) => ({ certificate_id: job.certificate_id as string, job_id: job.id })),
        );
      });
      const result: BulkRenewResult = {
        total_matched: enqueued.length + skipped + refused,
        total_renewed: enqueued.length,
        total_skipped: skipped,
        total_failed: errors.length,
        errors,
        enqueued_jobs: enqueued,
      };
      const { enqueued_jobs: _jobs, ...counts } = result;
      await this.audit.record(actor, bulkEvent('certificates_bulk_renewed', data, counts), tx);
      return result;
    });
  }

  /**
   * Moves the listed certificates to another owner (and team). The owner and team are checked
   * before any certificate is touched; ids that do not exist are reported per certificate.
   */
  async reassign(actor: Actor, input: BulkReassignRequest): Promise<BulkReassignResult> {
    const data = parseInput(bulkReassignSchema, input);
    const given = reassignedIds(data);
    return this.deps.storage.transaction(async (tx) => {
      const issues = [];
      if (!(await tx.owners.get(data.owner_id))) {
        issues.push({ field: 'owner_id', message: `owner '${data.owner_id}' does not exist` });
      }
      if (data.team_id !== undefined && !(await tx.teams.get(data.team_id))) {
        issues.push({ field: 'team_id', message: `team '${data.team_id}' does not exist` });
      }
      if (issues.length > 0) throw invalidReference(issues);
      const ids = [...new Set(given)];
      const errors: BulkError[] = [];
      let reassigned = 0;
      const patch =
        data.team_id === undefined
          ? { owner_id: data.owner_id }
          : { owner_id: data.owner_id, team_id: data.team_id };
      for (let i = 0; i < ids.length; i += BATCH) {
        const chunk = ids.slice(i, i + BATCH);
        const existing = await tx.certificates.listIds({ ids: chunk }, { limit: chunk.length });
        errors.push(...missingFrom(chunk, existing));
        if (existing.length > 0) reassigned += await tx.certificates.updateMany(existing, patch);
      }
      const result: BulkReassignResult = {
        total_requested: ids.length,
        total_reassigned: reassigned,
        total_failed: errors.length,
        errors,
      };
      const { ids: _ids, ...request } = data;
      await this.audit.record(
        actor,
        bulkEvent('certificates_bulk_reassigned', { ...request, certificate_ids: given }, result),
        tx,
      );
      return result;
    });
  }
}

/** The ids of a reassign request: `ids` or `certificate_ids`, exactly one of them (400 naming `ids` otherwise). */
function reassignedIds(data: z.output<typeof bulkReassignSchema>): string[] {
  if (data.ids && data.certificate_ids) {
    throw validationError([{ field: 'ids', message: 'give ids or certificate_ids, not both' }]);
  }
  const ids = data.ids ?? data.certificate_ids;
  if (!ids) throw validationError([{ field: 'ids', message: 'is required' }]);
  return ids;
}

/**
 * Turns criteria into a storage filter, refusing the two shapes the service refuses: no criterion at
 * all, and `source` alone ("too broad": it would select a whole provenance class). `source: ""`
 * means any source and adds no condition.
 */
function criteriaFilter(data: z.output<typeof bulkRenewSchema>): CertificateFilter {
  const ids =
    data.certificate_ids && data.certificate_ids.length > 0 ? [...new Set(data.certificate_ids)] : undefined;
  const narrowing = {
    profile_id: data.profile_id,
    owner_id: data.owner_id,
    agent_id: data.agent_id,
    issuer_id: data.issuer_id,
    team_id: data.team_id,
  };
  const hasNarrowing = ids !== undefined || Object.values(narrowing).some((v) => v !== undefined);
  if (!hasNarrowing) {
    if (data.source !== undefined && data.source !== '') {
      throw validationError(
        [{ field: 'source', message: 'too broad: combine source with another criterion or certificate_ids' }],
        'criteria too broad: source alone would select every certificate of that provenance',
      );
    }
    throw validationError(
      [
        {
          field: 'criteria',
          message:
            'at least one of profile_id, owner_id, agent_id, issuer_id, team_id, certificate_ids is required',
        },
      ],
      'bulk criteria are empty',
    );
  }
  const source: CertificateSource | undefined = data.source === '' ? undefined : data.source;
  return { ids, ...narrowing, source };
}

/** Issuers that have at least one certificate the filter selects, in id order. */
async function affectedIssuers(tx: Storage, filter: CertificateFilter): Promise<string[]> {
  const candidates: string[] = [];
  if (filter.issuer_id !== undefined) {
    candidates.push(filter.issuer_id);
  } else {
    for (let page = 1; ; page += 1) {
      const result = await tx.issuers.list({ page, perPage: BATCH });
      candidates.push(...result.items.map((i) => i.id));
      if (result.items.length < BATCH) break;
    }
  }
  const found: string[] = [];
  for (const issuer_id of candidates) {
    if ((await tx.certificates.listIds({ ...filter, issuer_id }, { limit: 1 })).length > 0)
      found.push(issuer_id);
  }
  return found.sort();
}

/** Ids of the disabled issuers (few: a set read once per call). */
async function disabledIssuers(tx: Storage): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let page = 1; ; page += 1) {
    const result = await tx.issuers.list({ enabled: false, page, perPage: BATCH });
    for (const i of result.items) ids.add(i.id);
    if (result.items.length < BATCH) return ids;
  }
}

/** Walks the ids a filter selects, in id order, one keyset page at a time. */
async function eachBatch(
  tx: Storage,
  filter: CertificateFilter,
  fn: (ids: string[]) => Promise<void>,
): Promise<void> {
  let afterId: string | undefined;
  for (;;) {
    const ids = await tx.certificates.listIds(filter, { afterId, limit: BATCH });
    if (ids.length === 0) return;
    await fn(ids);
    if (ids.length < BATCH) return;
    afterId = ids[ids.length - 1];
  }
}

/** Per-certificate `not_found` errors for listed ids that name no certificate. */
async function unknownIds(tx: Storage, ids: readonly string[] | undefined): Promise<BulkError[]> {
  if (!ids || ids.length === 0) return [];
  const unique = [...new Set(ids)];
  const errors: BulkError[] = [];
  for (let i = 0; i < unique.length; i += BATCH) {
    const chunk = unique.slice(i, i + BATCH);
    errors.push(
      ...missingFrom(chunk, await tx.certificates.listIds({ ids: chunk }, { limit: chunk.length })),
    );
  }
  return errors;
}

function missingFrom(requested: readonly string[], existing: readonly string[]): BulkError[] {
  const found = new Set(existing);
  return requested
    .filter((id) => !found.has(id))
    .map((id) => ({ certificate_id: id, error: 'not_found', message: `certificate '${id}' does not exist` }));
}

function bulkEvent(action: string, request: object, result: object) {
  const { certificate_ids, ...criteria } = request as { certificate_ids?: string[] };
  return {
    action,
    category: 'cert_lifecycle' as const,
    resource_type: 'certificate',
    resource_id: 'bulk',
    // The id list can hold 10,000 entries; the event keeps its size, the result its counts.
    details: { ...criteria, certificate_ids_count: certificate_ids?.length ?? 0, ...result },
  };
}
