import { z } from 'zod';
import {
  CERTIFICATE_STATUSES,
  type CertificateStatus,
  type CertificateVersion,
  certificateSourceSchema,
  certificateStatusSchema,
  type ManagedCertificate,
  type RevocationReason,
  revocationReasonSchema,
} from '../domain/certificate.js';
import { idSchema } from '../domain/common.js';
import { CertwrightError, type FieldIssue, fail, notFound, validationError } from '../errors.js';
import { type CertificateDetails, describeCertificate, describeEach } from '../pki/certificate-details.js';
import type { CertificateListKey, Storage } from '../ports/storage.js';
import type { AuditService } from './audit.js';
import { decodeCursor, encodeCursor, queryDigest } from './certificate-cursor.js';
import { assertRecordNames } from './certificate-names.js';
import type { Actor, ServiceDeps } from './context.js';
import { instantSchema, invalidReference, type Paged, parseInput, stillReferenced } from './input.js';
import { checkRecordNamesAgainstProfile } from './issuance/profile-rules.js';
import { reportOutcome } from './outcomes.js';
import { pageQuerySchema } from './paging.js';
import type { PolicyEvaluationService } from './policies.js';
import type { RevocationService } from './revocation.js';

const metadataSchema = z
  .record(z.string().min(1).max(128), z.string().max(1024))
  .refine((m) => Object.keys(m).length <= 100, 'at most 100 keys');

const fields = {
  name: z.string().trim().min(1).max(255),
  common_name: z.string().trim().min(1).max(255),
  sans: z.array(z.string().trim().min(1).max(255)).max(100),
  profile_id: idSchema.nullable(),
  environment: z.string().trim().min(1).max(64).nullable(),
  metadata: metadataSchema,
  tags: z.array(z.string().trim().min(1).max(64)).max(50),
};

/** The six required fields, plus the optional ones of the inventory. */
export const certificateCreateSchema = z.object({
  name: fields.name,
  common_name: fields.common_name,
  renewal_policy_id: idSchema,
  issuer_id: idSchema,
  owner_id: idSchema,
  team_id: idSchema,
  sans: fields.sans.optional(),
  profile_id: fields.profile_id.optional(),
  environment: fields.environment.optional(),
  metadata: fields.metadata.optional(),
  tags: fields.tags.optional(),
  source: certificateSourceSchema.optional().describe('provenance; "" (unspecified) by default'),
  target_ids: z
    .array(idSchema)
    .max(100)
    .optional()
    .describe('deployment targets the certificate is deployed to after each issuance and renewal'),
});

/**
 * Update names only what changes. Status and source are not here: status moves through its own
 * operations (issue, renew, revoke, archive) and provenance is fixed at creation.
 */
export const certificateUpdateSchema = z.object({
  name: fields.name.optional(),
  common_name: fields.common_name.optional(),
  renewal_policy_id: idSchema.optional(),
  issuer_id: idSchema.optional(),
  owner_id: idSchema.optional(),
  team_id: idSchema.optional(),
  sans: fields.sans.optional(),
  profile_id: fields.profile_id.optional(),
  environment: fields.environment.optional(),
  metadata: fields.metadata.optional(),
  tags: fields.tags.optional(),
  target_ids: z
    .array(idSchema)
    .max(100)
    .optional()
    .describe(
      'deployment targets the certificate is deployed to after each issuance and renewal; replaces the bound set',
    ),
});

/** `status=Active,Expiring` or a repeated `status`; each value must be a known status. */
const statusListSchema = z.preprocess(
  (v) => (typeof v === 'string' ? v.split(',').map((s) => s.trim()) : v),
  z.array(certificateStatusSchema).min(1),
);

export const CERTIFICATE_SORT_FIELDS = [
  'name',
  'common_name',
  'status',
  'expires_at',
  'created_at',
  'updated_at',
] as const;

export const certificateListSchema = pageQuerySchema.extend({
  status: statusListSchema.optional().describe(`comma-separated: ${CERTIFICATE_STATUSES.join(', ')}`),
  issuer_id: idSchema.optional(),
  owner_id: idSchema.optional(),
  team_id: idSchema.optional(),
  profile_id: idSchema.optional(),
  renewal_policy_id: idSchema.optional(),
  agent_id: idSchema.optional().describe('certificates bound to a target of this agent'),
  source: certificateSourceSchema.optional().describe('"" selects certificates of unspecified provenance'),
  environment: z.string().max(64).optional(),
  expires_before: instantSchema.optional().describe('latest version not_after strictly before (RFC 3339)'),
  expires_after: instantSchema.optional().describe('latest version not_after at or after (RFC 3339)'),
  search: z
    .string()
    .max(255)
    .optional()
    .describe('case-insensitive substring of name, common_name or any SAN'),
  serial: z
    .string()
    .max(128)
    .regex(/^[0-9a-fA-F:\s]+$/, 'hexadecimal digits, optionally separated by colons')
    .transform((v) =>
      v
        .replace(/[:\s]/g, '')
        .toLowerCase()
        .replace(/^0+(?=.)/, ''),
    )
    .optional()
    .describe('a serial number some version carries, in hex as openssl prints it (colons allowed)'),
  sort: z.enum(CERTIFICATE_SORT_FIELDS).optional().describe('default created_at'),
  order: z.enum(['asc', 'desc']).optional().describe('default desc for created_at, asc otherwise'),
  cursor: z
    .string()
    .max(1024)
    .optional()
    .describe(
      'next_cursor of the previous page of the same query: continues after its last row (keyset), however deep; not combined with page',
    ),
});

/**
 * Matches counted exactly by the list; beyond it `total` is the database's estimate and
 * `total_estimated` is true (docs/api/inventory.md). Counting stops here so a page costs the
 * same whether a thousand or a million certificates match.
 */
export const EXACT_TOTAL_LIMIT = 1000;

/** The dashboard's "expiring soon" window. */
export const EXPIRING_SOON_DAYS = 30;

/** Dashboard figures about the inventory (`CertificateService.summary`). */
export interface InventorySummary {
  by_status: Record<CertificateStatus, number>;
  /** Sum of by_status. */
  total: number;
  /** Active or Expiring, latest version expiring from now to now + expiring_soon_days. */
  expiring_soon: number;
  expiring_soon_days: number;
  /** True when any figure is an estimate (more than EXACT_TOTAL_LIMIT matched). */
  estimated: boolean;
}

const TIMESTAMP_SORTS = new Set(['expires_at', 'created_at', 'updated_at']);

/** The certificate list envelope: the common `{data, total, page, per_page}` plus keyset paging. */
export interface CertificateList extends Paged<ManagedCertificate> {
  /** True when more than EXACT_TOTAL_LIMIT match and `total` is an estimate. */
  total_estimated: boolean;
  /** Cursor of the next page (send it as `cursor`); null on the last page. */
  next_cursor: string | null;
}
export const versionListSchema = pageQuerySchema;
export const revokeSchema = z.object({
  reason: revocationReasonSchema.optional().describe('default unspecified'),
});

export type CertificateCreate = z.input<typeof certificateCreateSchema>;
export type CertificateUpdate = z.input<typeof certificateUpdateSchema>;
export type CertificateListRequest = z.input<typeof certificateListSchema>;

/** Key data of the latest version (clients read key data from the latest version). */
export interface CertificateKeyData {
  certificate_id: string;
  version_id: string;
  serial_number: string;
  fingerprint_sha256: string;
  key_algorithm: string;
  key_size: number;
  issued_at: Date;
  not_before: Date;
  not_after: Date;
  csr_pem: string | null;
}

/** One version decoded for display, with its chain (docs/api/inventory.md#decoded-certificates). */
export interface VersionDetails {
  certificate_id: string;
  version_id: string;
  /** The version the certificate currently points at. */
  current: boolean;
  /** The server holds this version's private key (it generated it): PKCS#12 export is possible. */
  private_key_held: boolean;
  certificate: CertificateDetails;
  chain: CertificateDetails[];
  /** Chain certificates the reader refused (counted, not shown). */
  chain_undecodable: number;
}

/** The managed-certificate inventory. */
export class CertificateService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
    private readonly evaluation: PolicyEvaluationService,
    private readonly revocation: RevocationService,
  ) {}

  /**
   * Stores a certificate in status Pending (issuance picks it up from there) and evaluates the
   * policy rules against it, all in one transaction. Its names must pass the lint of
   * certificate-names.ts (`name_rejected`), at creation and at every change of them, and
   * name IP addresses only under a profile that allows them (`name_not_allowed`).
   */
  async create(actor: Actor, input: CertificateCreate): Promise<ManagedCertificate> {
    const data = parseInput(certificateCreateSchema, input);
    assertRecordNames(data.common_name, data.sans ?? []);
    return this.deps.storage.transaction(async (tx) => {
      await checkReferences(tx, data);
      if (data.profile_id) {
        checkRecordNamesAgainstProfile(
          await tx.profiles.get(data.profile_id),
          data.common_name,
          data.sans ?? [],
        );
      }
      const certificate = await tx.certificates.create({
        name: data.name,
        common_name: data.common_name,
        renewal_policy_id: data.renewal_policy_id,
        issuer_id: data.issuer_id,
        owner_id: data.owner_id,
        team_id: data.team_id,
        sans: data.sans ?? [],
        profile_id: data.profile_id ?? null,
        environment: data.environment ?? null,
        metadata: data.metadata ?? {},
        tags: data.tags ?? [],
        source: data.source ?? '',
        status: 'Pending',
      });
      if (data.target_ids?.length) await tx.certificates.setTargets(certificate.id, data.target_ids);
      await this.evaluation.evaluateCertificate(certificate.id, tx);
      await this.audit.record(actor, lifecycle('certificate_created', certificate.id, data), tx);
      return certificate;
    });
  }

  async get(id: string): Promise<ManagedCertificate> {
    const certificate = await this.deps.storage.certificates.get(id);
    if (!certificate) throw notFound('certificate', id);
    return certificate;
  }

  async list(query: CertificateListRequest = {}): Promise<CertificateList> {
    const q = parseInput(certificateListSchema, query);
    const filter = {
      status: q.status,
      issuer_id: q.issuer_id,
      owner_id: q.owner_id,
      team_id: q.team_id,
      profile_id: q.profile_id,
      renewal_policy_id: q.renewal_policy_id,
      agent_id: q.agent_id,
      source: q.source,
      environment: q.environment,
      expiresBefore: q.expires_before,
      expiresAfter: q.expires_after,
      search: q.search,
      serial: q.serial,
      sort: q.sort,
      order: q.order,
    };
    const digest = queryDigest(filter);
    let page = q.page;
    let after: CertificateListKey | undefined;
    let estimatedTotal: number | undefined;
    if (q.cursor !== undefined) {
      if (page > 1)
        throw validationError([
          { field: 'page', message: 'cannot be combined with cursor; send one of them' },
        ]);
      const decoded = decodeCursor(q.cursor, digest, TIMESTAMP_SORTS.has(q.sort ?? 'created_at'));
      page = decoded.page;
      after = decoded.key;
      // An estimate is not redone on every page: the first page's travels in the cursor.
      estimatedTotal = decoded.estimatedTotal;
    }
    const result = await this.deps.storage.certificates.list({
      ...filter,
      page,
      perPage: q.per_page,
      after,
      exactTotalLimit: EXACT_TOTAL_LIMIT,
      estimatedTotal,
    });
    return {
      data: result.items,
      total: result.total,
      total_estimated: result.totalEstimated,
      page,
      per_page: q.per_page,
      next_cursor: result.next
        ? encodeCursor(digest, page + 1, result.next, result.totalEstimated ? result.total : undefined)
        : null,
    };
  }

  async update(actor: Actor, id: string, input: CertificateUpdate): Promise<ManagedCertificate> {
    const data = parseInput(certificateUpdateSchema, input);
    return this.deps.storage.transaction(async (tx) => {
      const current = await tx.certificates.get(id);
      if (!current) throw notFound('certificate', id);
      if (data.common_name !== undefined || data.sans !== undefined) {
        assertRecordNames(data.common_name ?? current.common_name, data.sans ?? current.sans);
      }
      await checkReferences(tx, data);
      const profileId = data.profile_id !== undefined ? data.profile_id : current.profile_id;
      if (profileId && (data.common_name !== undefined || data.sans !== undefined || data.profile_id)) {
        checkRecordNamesAgainstProfile(
          await tx.profiles.get(profileId),
          data.common_name ?? current.common_name,
          data.sans ?? current.sans,
        );
      }
      const { target_ids: targetIds, ...patch } = data;
      const certificate = await tx.certificates.update(id, patch);
      if (targetIds !== undefined) await tx.certificates.setTargets(id, targetIds);
      await this.evaluation.evaluateCertificate(id, tx);
      await this.audit.record(actor, lifecycle('certificate_updated', id, data), tx);
      return certificate;
    });
  }

  /**
   * Archived certificates stay in the inventory (and in CRLs, when revoked) but are no longer
   * renewed; their open jobs are cancelled.
   */
  async archive(actor: Actor, id: string): Promise<ManagedCertificate> {
    return this.deps.storage.transaction(async (tx) => {
      if (!(await tx.certificates.get(id))) throw notFound('certificate', id);
      const certificate = await tx.certificates.update(id, { status: 'Archived' });
      const cancelled = await tx.jobs.cancelOpenForCertificate(id, this.deps.clock.now());
      await this.audit.record(
        actor,
        lifecycle('certificate_archived', id, { cancelled_jobs: cancelled }),
        tx,
      );
      return certificate;
    });
  }

  /**
   * Deletes a certificate that was never issued. One with versions is history (CRL, OCSP, audit
   * depend on it) and one with open jobs is in use: both are 409 — archive those instead.
   */
  async delete(actor: Actor, id: string): Promise<void> {
    await this.deps.storage.transaction(async (tx) => {
      if (!(await tx.certificates.get(id))) throw notFound('certificate', id);
      const refused = stillReferenced('certificate', id, await tx.certificates.references(id));
      if (refused) throw refused;
      // Violations and target bindings go with the certificate (storage cascades).
      await tx.certificates.delete(id);
      await this.audit.record(actor, lifecycle('certificate_deleted', id), tx);
    });
  }

  /** Revokes one certificate (any non-revoked status → Revoked). */
  async revoke(actor: Actor, id: string, reason: RevocationReason): Promise<ManagedCertificate> {
    const certificate = await this.get(id);
    try {
      if (certificate.status === 'Revoked') {
        throw fail('already_revoked', `certificate '${id}' is already revoked`, {
          extra: { resource: 'certificate', id },
        });
      }
      await this.revocation.revokeCertificates([id], reason, actor);
    } catch (error) {
      reportOutcome(this.deps, { kind: 'revocation', issuerId: certificate.issuer_id, outcome: 'failure' });
      throw error;
    }
    return this.get(id);
  }

  async versions(
    id: string,
    query: z.input<typeof versionListSchema> = {},
  ): Promise<Paged<CertificateVersion>> {
    const q = parseInput(versionListSchema, query);
    await this.get(id);
    const result = await this.deps.storage.versions.listForCertificate(id, {
      page: q.page,
      perPage: q.per_page,
    });
    return { data: result.items, total: result.total, page: q.page, per_page: q.per_page };
  }

  /** One version of the certificate, decoded with its chain; 404 for a version of another certificate. */
  async versionDetails(id: string, versionId: string): Promise<VersionDetails> {
    const certificate = await this.get(id);
    const version = await this.deps.storage.versions.get(versionId);
    if (!version || version.certificate_id !== id) throw notFound('certificate version', versionId);
    const { chain, undecodable } = describeEach(version.chain_pem);
    return {
      certificate_id: id,
      version_id: version.id,
      current: certificate.current_version_id === version.id,
      private_key_held: await this.deps.storage.versions.hasPrivateKey(version.id),
      certificate: describeCertificate(version.cert_pem),
      chain,
      chain_undecodable: undecodable,
    };
  }

  /** 404 names the certificate when it has no version yet (not issued). */
  async keyData(id: string): Promise<CertificateKeyData> {
    const certificate = await this.get(id);
    // current_version_id is set atomically with each new version, so it names the latest one
    // even when two versions share a timestamp.
    const v = certificate.current_version_id
      ? await this.deps.storage.versions.get(certificate.current_version_id)
      : await this.deps.storage.versions.latest(id);
    if (!v) {
      throw new CertwrightError('not_found', `certificate '${id}' has no issued version yet`, {
        extra: { resource: 'certificate version', certificate_id: id },
      });
    }
    return {
      certificate_id: id,
      version_id: v.id,
      serial_number: v.serial_number,
      fingerprint_sha256: v.fingerprint_sha256,
      key_algorithm: v.key_algorithm,
      key_size: v.key_size,
      issued_at: v.issued_at,
      not_before: v.not_before,
      not_after: v.not_after,
      csr_pem: v.csr_pem,
    };
  }

  countByStatus(): Promise<Record<CertificateStatus, number>> {
    return this.deps.storage.certificates.countByStatus();
  }

  /**
   * Dashboard figures: certificates by status and those Active or Expiring whose latest version
   * expires within 30 days. Like list totals, each count is exact up to EXACT_TOTAL_LIMIT and the
   * database's estimate above it (`estimated` says whether any is), so the cost stays bounded.
   */
  async summary(): Promise<InventorySummary> {
    const now = this.deps.clock.now();
    const counts = await this.deps.storage.certificates.countEach(
      [
        ...CERTIFICATE_STATUSES.map((status) => ({ status })),
        {
          status: ['Active', 'Expiring'] as CertificateStatus[],
          expiresAfter: now,
          expiresBefore: new Date(now.getTime() + EXPIRING_SOON_DAYS * 86_400_000),
        },
      ],
      { exactLimit: EXACT_TOTAL_LIMIT },
    );
    const byStatus = counts.slice(0, CERTIFICATE_STATUSES.length);
    const expiring = counts[CERTIFICATE_STATUSES.length] ?? { total: 0, estimated: false };
    const by_status = Object.fromEntries(
      CERTIFICATE_STATUSES.map((status, i) => [status, byStatus[i]?.total ?? 0]),
    ) as Record<CertificateStatus, number>;
    return {
      by_status,
      total: Object.values(by_status).reduce((a, b) => a + b, 0),
      expiring_soon: expiring.total,
      expiring_soon_days: EXPIRING_SOON_DAYS,
      estimated: expiring.estimated || byStatus.some((c) => c.estimated),
    };
  }
}

/**
 * Every id a certificate names must exist, and `renewal_policy_id` must name a renewal policy —
 * an id of a policy rule is called out as such. All problems are reported at once.
 */
async function checkReferences(
  tx: Storage,
  data: {
    renewal_policy_id?: string;
    issuer_id?: string;
    owner_id?: string;
    team_id?: string;
    profile_id?: string | null;
    target_ids?: readonly string[];
  },
): Promise<void> {
  const issues: FieldIssue[] = [];
  const missing = (field: string, what: string, id: string) =>
    issues.push({ field, message: `${what} '${id}' does not exist` });
  if (data.renewal_policy_id !== undefined && !(await tx.renewalPolicies.get(data.renewal_policy_id))) {
    if (await tx.policyRules.get(data.renewal_policy_id)) {
      issues.push({
        field: 'renewal_policy_id',
        message: `'${data.renewal_policy_id}' is a policy rule, not a renewal policy`,
      });
    } else {
      missing('renewal_policy_id', 'renewal policy', data.renewal_policy_id);
    }
  }
  if (data.issuer_id !== undefined && !(await tx.issuers.get(data.issuer_id)))
    missing('issuer_id', 'issuer', data.issuer_id);
  if (data.owner_id !== undefined && !(await tx.owners.get(data.owner_id)))
    missing('owner_id', 'owner', data.owner_id);
  if (data.team_id !== undefined && !(await tx.teams.get(data.team_id)))
    missing('team_id', 'team', data.team_id);
  if (typeof data.profile_id === 'string' && !(await tx.profiles.get(data.profile_id))) {
    missing('profile_id', 'profile', data.profile_id);
  }
  for (const targetId of new Set(data.target_ids ?? [])) {
    const target = await tx.targets.get(targetId);
    if (!target) missing('target_ids', 'target', targetId);
    else if (target.retired_at !== null) {
      issues.push({ field: 'target_ids', message: `target '${targetId}' is retired` });
    }
  }
  if (issues.length > 0) throw invalidReference(issues);
}

function lifecycle(action: string, id: string, details?: object) {
  return {
    action,
    category: 'cert_lifecycle' as const,
    resource_type: 'certificate',
    resource_id: id,
    details: details ? { ...details } : {},
  };
}
