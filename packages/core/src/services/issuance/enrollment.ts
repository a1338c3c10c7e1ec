import { isIP } from 'node:net';
import { z } from 'zod';
import type { CertificateVersion, ManagedCertificate } from '../../domain/certificate.js';
import { idSchema } from '../../domain/common.js';
import type { PolicyRule } from '../../domain/policy.js';
import type { CertificateProfile } from '../../domain/profile.js';
import { fail, notFound } from '../../errors.js';
import { parseCertificationRequest } from '../../pki/csr.js';
import type { SubjectAltName } from '../../pki/extensions.js';
import { pemEncode } from '../../pki/pem.js';
import type { Storage } from '../../ports/storage.js';
import type { AuditService } from '../audit.js';
import { namesToSign, sanKey } from '../certificate-names.js';
import type { Actor, ServiceDeps } from '../context.js';
import { parseInput } from '../input.js';
import type { JobService } from '../jobs.js';
import { reportOutcome } from '../outcomes.js';
import type { PolicyEvaluationService } from '../policies.js';
import { RevisionedCache } from '../revisioned-cache.js';
import { GroupCommit } from './group-commit.js';
import { checkCsrAgainstProfile, checkNamesAgainstProfile, refuse } from './profile-rules.js';
import { ReadGroup } from './read-group.js';
import { isShortLived } from './short-lived.js';
import type { CertificateSigner, SigningMaterial } from './signing.js';

/**
 * Enrollment: the one issuance path of the enrollment protocols (ACME finalize, EST, SCEP). A
 * protocol has authenticated its client and authorized the names; `enroll` judges the CSR
 * against the profile, signs synchronously through the same signer as job issuance, and stores
 * a new managed certificate (or a new version of the one being re-enrolled) in one
 * transaction, together with whatever the caller's hook writes (an ACME order).
 */

const DAY = 86_400_000;
/** Clock skew tolerated on requested start times and on the default one (relying parties' clocks). */
const SKEW_MS = 60_000;
/** How far before now a requested notBefore may lie: backdating beyond this is refused. */
const MAX_BACKDATE_MS = 3_600_000;
/** Certificate metadata holds at most this many keys (the certificate schema's limit). */
const MAX_METADATA_KEYS = 100;

export const ENROLLMENT_SOURCES = ['ACME', 'EST', 'SCEP'] as const;
const PROTOCOL_LABEL = { ACME: 'acme', EST: 'est', SCEP: 'scep' } as const;

export const enrollInputSchema = z.object({
  profileId: idSchema,
  csrDer: z.instanceof(Uint8Array),
  source: z.enum(ENROLLMENT_SOURCES),
  names: z
    .object({
      dns: z.array(z.string().min(1).max(255)).max(100),
      ip: z.array(z.string().min(1).max(64)).max(100),
    })
    .optional(),
  notBefore: z.date().optional(),
  notAfter: z.date().optional(),
  provenance: z
    .record(z.string().min(1).max(128), z.string().max(1024))
    .refine((m) => Object.keys(m).length <= 20, 'at most 20 keys')
    .optional(),
  renewsCertificateId: idSchema.optional(),
});

export interface EnrollInput {
  /** Its enrollment settings give issuer, owner, team and renewal policy of a new certificate. */
  profileId: string;
  /** Untrusted PKCS#10 DER: bounded parser, signature (proof of possession), profile key rules. */
  csrDer: Uint8Array;
  source: 'ACME' | 'EST' | 'SCEP';
  /** When given (ACME), the CSR's names must equal these exactly, else `names_mismatch`. */
  names?: { dns: string[]; ip: string[] };
  /** Requested validity, checked against the profile (`validity_not_allowed`). */
  notBefore?: Date;
  notAfter?: Date;
  /** E.g. `{ acme_account_id, acme_order_id }`: on the audit event and the certificate's metadata. */
  provenance?: Record<string, string>;
  /** Re-enrollment (EST simplereenroll, SCEP renewal, ACME `replaces`): a new version of that certificate. */
  renewsCertificateId?: string;
}

export interface EnrollResult {
  certificate: ManagedCertificate;
  version: CertificateVersion;
  certificatePem: string;
  /** The issuing CA chain as PEM, nearest first. */
  chainPem: string[];
}

export interface EnrollHooks {
  /**
   * Runs inside the transaction that stores the new version, so a caller's own record (an
   * ACME order) commits atomically with it; if it throws, nothing is stored.
   */
  withinTransaction?: (tx: Storage, result: EnrollResult) => Promise<void>;
  /**
   * The profile as the caller read it for this same request (outside any transaction, as
   * `enroll` would): not read a second time. Ignored unless its id is `profileId`.
   */
  profile?: CertificateProfile;
}

/**
 * How long the enrollment path reuses its reads of a profile and of the enabled policy rules.
 * A write through this process's ProfileService or PolicyRuleService (their `revision`) is seen
 * by the next enrollment; one made by another instance within `readCacheMs` (docs/api/lifecycle.md,
 * "Issuance pipeline"). Without the revisions nothing is reused beyond one shared read.
 */
export interface EnrollmentReadCacheOptions {
  /** Default 1000 ms; 0: every enrollment reads (sharing concurrent reads only). */
  readCacheMs?: number;
  profileRevision?: () => number;
  policyRuleRevision?: () => number;
}

export const DEFAULT_ENROLLMENT_READ_CACHE_MS = 1000;

interface Subject {
  profile: CertificateProfile;
  /** Null for a new certificate. */
  renews: ManagedCertificate | null;
  issuerId: string;
}

export class EnrollmentService {
  /** Concurrent enrollments store in shared transactions (group-commit.ts). */
  readonly #commits: GroupCommit;
  /**
   * Concurrent enrollments share their reads of the profile and of the rules (read-group.ts),
   * and reuse them for `readCacheMs` while no local write changed them (revisioned-cache.ts).
   * The issuer is NOT cached: a disabled issuer refuses at once on every instance (signing.ts).
   */
  readonly #profiles: (id: string) => Promise<CertificateProfile | null>;
  readonly #rules: () => Promise<PolicyRule[]>;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
    private readonly jobs: JobService,
    private readonly evaluation: PolicyEvaluationService,
    private readonly signer: CertificateSigner,
    options: EnrollmentReadCacheOptions = {},
  ) {
    this.#commits = new GroupCommit(deps.storage);
    const ttlMs = options.readCacheMs ?? DEFAULT_ENROLLMENT_READ_CACHE_MS;
    const profileReads = new ReadGroup((id) => deps.storage.profiles.get(id));
    const ruleReads = new ReadGroup(() => evaluation.enabledRules());
    const profileRevision = options.profileRevision;
    const ruleRevision = options.policyRuleRevision;
    if (profileRevision && ttlMs > 0) {
      const cache = new RevisionedCache<CertificateProfile | null>({ ttlMs, revision: profileRevision });
      this.#profiles = (id) => cache.get(id, () => profileReads.get(id));
    } else this.#profiles = (id) => profileReads.get(id);
    if (ruleRevision && ttlMs > 0) {
      const cache = new RevisionedCache<PolicyRule[]>({ ttlMs, revision: ruleRevision });
      this.#rules = () => cache.get('', () => ruleReads.get(''));
    } else this.#rules = () => ruleReads.get('');
  }

  async enroll(actor: Actor, input: EnrollInput, hooks: EnrollHooks = {}): Promise<EnrollResult> {
    const data = parseInput(enrollInputSchema, input);
    const protocol = PROTOCOL_LABEL[data.source];
    try {
      const result = await this.#enroll(actor, data, hooks);
      reportOutcome(this.deps, { kind: 'enrollment', protocol, outcome: 'success' });
      return result;
    } catch (error) {
      // A refused CSR, a profile that forbids the names, a signing or storage failure.
      reportOutcome(this.deps, { kind: 'enrollment', protocol, outcome: 'failure' });
      throw error;
    }
  }

  async #enroll(
    actor: Actor,
    data: z.output<typeof enrollInputSchema>,
    hooks: EnrollHooks,
  ): Promise<EnrollResult> {
    const target = await this.#subject(data.profileId, data.renewsCertificateId, hooks.profile);
    const csr = parseCertificationRequest(data.csrDer); // bounded, signature verified
    const ekus = checkCsrAgainstProfile(target.profile, csr);
    const commonName = csr.subject.rdns.flat().find((a) => a.type === 'CN')?.value ?? null;
    if (commonName !== null && commonName.length > 64) {
      throw refuse(
        'csr',
        'the common name is longer than 64 characters (RFC 5280 ub-common-name)',
        'name_rejected',
      );
    }
    const requested: SubjectAltName[] = [];
    for (const san of csr.subjectAltNames) {
      if (san.type === 'other')
        throw refuse('csr', 'the request names an unsupported name form', 'name_rejected');
      requested.push(san);
    }
    if (data.names) assertSameNames(commonName, requested, data.names);
    // Checked here so that a refusal costs no signature; the signer lints again before signing.
    const sans = namesToSign(commonName, requested);
    if (sans.length === 0) throw refuse('csr', 'the request names nothing to certify', 'name_rejected');
    checkNamesAgainstProfile(target.profile, sans, 'csr');
    const { notBefore, notAfter } = this.#validity(target.profile, data.notBefore, data.notAfter);
    const material: SigningMaterial = {
      request: {
        subject: commonName ? [{ type: 'CN', value: commonName }] : [],
        subjectAltNames: sans,
        publicKey: csr.spki,
        notBefore,
        notAfter,
        extendedKeyUsage: ekus,
        // RFC 7633 §4.2.1: a requester asking for the TLS feature gets it; a profile may impose it.
        mustStaple: target.profile.must_staple || csr.mustStaple,
        shortLived: isShortLived(target.profile, this.deps.clock.now(), notAfter),
        csrDer: csr.der,
      },
      commonName,
      csrPem: pemEncode('CERTIFICATE REQUEST', csr.der),
      key: csr.publicKey,
    };
    // Read once: the signer's AllowedDomains check and the evaluation after storing both use them.
    const rules = await this.#rules();
    const issued = await this.signer.sign(
      target.issuerId,
      material,
      target.renews ? 'renew' : 'issue',
      rules,
    );
    const provenance = data.provenance ?? {};
    const names = { common_name: commonName ?? sans[0]!.value, sans: sans.map((s) => s.value) };
    return this.#commits.run(async (tx) => {
      const now = this.deps.clock.now();
      let certificateId: string;
      let version: CertificateVersion;
      let certificate: ManagedCertificate | null;
      if (target.renews) {
        // Re-read under the row lock: it may have been revoked or archived while the CA signed,
        // and a revocation committing after a plain read would be undone by the update below.
        const renewed = await tx.certificates.lockForUpdate(target.renews.id);
        assertRenewable(renewed);
        certificateId = renewed.id;
        version = await this.signer.storeVersion(tx, certificateId, target.issuerId, material, issued);
        const metadata = { ...renewed.metadata, ...provenance };
        // One update after the version: the new names, the provenance, Active again. The name is
        // unchanged, given so that the storage derives the search text without a read.
        certificate = await tx.certificates.update(certificateId, {
          name: renewed.name,
          ...names,
          ...(Object.keys(metadata).length <= MAX_METADATA_KEYS ? { metadata } : {}),
          status: 'Active',
          last_renewal_at: now,
        });
      } else {
        const { enrollment } = target.profile;
        // The certificate and its first version in one write: Active from the start, as it is
        // the new version's; stored as written, so not read back.
        const stored = await this.signer.storeWithCertificate(
          tx,
          {
            name: `${data.source} ${names.common_name}`.slice(0, 255),
            ...names,
            renewal_policy_id: enrollment.renewal_policy_id!,
            issuer_id: target.issuerId,
            owner_id: enrollment.owner_id!,
            team_id: enrollment.team_id!,
            profile_id: target.profile.id,
            source: data.source,
            metadata: provenance,
            status: 'Active',
          },
          target.issuerId,
          material,
          issued,
        );
        certificate = stored.certificate;
        version = stored.version;
        certificateId = certificate.id;
      }
      if (!certificate) throw notFound('certificate', certificateId);
      if (target.renews) await this.jobs.createDeploymentJobs(certificateId, version.id, { actor, tx });
      await this.evaluation.evaluateCertificate(certificateId, tx, certificate, {
        rules,
        created: !target.renews,
      });
      await this.audit.record(
        actor,
        {
          action: target.renews ? 'certificate_reenrolled' : 'certificate_enrolled',
          category: 'cert_lifecycle',
          resource_type: 'certificate',
          resource_id: certificateId,
          details: {
            source: data.source,
            profile_id: target.profile.id,
            issuer_id: target.issuerId,
            version_id: version.id,
            serial_number: version.serial_number,
            not_after: version.not_after.toISOString(),
            provenance,
          },
        },
        tx,
      );
      const result: EnrollResult = {
        certificate,
        version,
        certificatePem: version.cert_pem,
        chainPem: pemBlocks(issued.chainPem),
      };
      await hooks.withinTransaction?.(tx, result);
      return result;
    });
  }

  /** The profile, and the certificate being re-enrolled or the settings a new one gets. */
  async #subject(
    profileId: string,
    renewsId: string | undefined,
    known: CertificateProfile | undefined,
  ): Promise<Subject> {
    const profile = known?.id === profileId ? known : await this.#profiles(profileId);
    if (!profile) throw notFound('profile', profileId);
    if (renewsId !== undefined) {
      const renews = await this.deps.storage.certificates.get(renewsId);
      if (!renews) throw notFound('certificate', renewsId);
      assertRenewable(renews);
      if (renews.profile_id !== profile.id) {
        throw fail(
          'invalid_state',
          `certificate '${renewsId}' belongs to profile '${renews.profile_id ?? '(none)'}', not '${profile.id}'`,
          { extra: { resource: 'certificate', id: renewsId } },
        );
      }
      return { profile, renews, issuerId: renews.issuer_id };
    }
    const missing = (['issuer_id', 'owner_id', 'team_id', 'renewal_policy_id'] as const).filter(
      (k) => profile.enrollment[k] === null,
    );
    if (missing.length > 0) {
      throw fail(
        'invalid_state',
        `profile '${profile.id}' cannot create certificates by enrollment: its enrollment settings lack ${missing.join(', ')}`,
        { extra: { resource: 'profile', id: profile.id } },
      );
    }
    return { profile, renews: null, issuerId: profile.enrollment.issuer_id! };
  }

  /**
   * Requested validity against the profile: no backdating beyond an hour, a start before the
   * end, an end in the future, and a span of at most the profile's max_validity_days.
   */
  #validity(
    profile: CertificateProfile,
    requestedStart: Date | undefined,
    requestedEnd: Date | undefined,
  ): { notBefore: Date; notAfter: Date } {
    const now = this.deps.clock.now().getTime();
    const maxMs = profile.max_validity_days * DAY;
    const notBefore = requestedStart?.getTime() ?? now - SKEW_MS;
    const notAfter = requestedEnd?.getTime() ?? (requestedStart ? notBefore : now) + maxMs;
    const problem =
      notBefore < now - MAX_BACKDATE_MS
        ? 'notBefore lies more than an hour in the past'
        : notAfter <= notBefore
          ? 'notAfter is not after notBefore'
          : notAfter <= now
            ? 'notAfter is in the past'
            : notAfter - notBefore > maxMs + SKEW_MS
              ? `the validity exceeds the profile maximum of ${profile.max_validity_days} days`
              : null;
    if (problem) throw refuse(requestedEnd ? 'notAfter' : 'notBefore', problem, 'validity_not_allowed');
    return { notBefore: new Date(notBefore), notAfter: new Date(notAfter) };
  }
}

function assertRenewable(certificate: ManagedCertificate): void {
  if (certificate.status === 'Revoked' || certificate.status === 'Archived') {
    throw fail(
      'invalid_state',
      `certificate '${certificate.id}' is ${certificate.status}: it cannot be re-enrolled`,
      {
        extra: { resource: 'certificate', id: certificate.id, certificate_status: certificate.status },
      },
    );
  }
}

/** RFC 8555 §7.4: the CSR names (common name and SANs) are exactly the authorized identifiers. */
function assertSameNames(
  commonName: string | null,
  sans: readonly SubjectAltName[],
  names: { dns: string[]; ip: string[] },
): void {
  const inCsr = new Set(sans.map(sanKey));
  if (commonName)
    inCsr.add(
      sanKey(isIP(commonName) ? { type: 'ip', value: commonName } : { type: 'dns', value: commonName }),
    );
  const authorized = new Set([
    ...names.dns.map((value) => sanKey({ type: 'dns', value })),
    ...names.ip.map((value) => sanKey({ type: 'ip', value })),
  ]);
  const extra = [...inCsr].filter((k) => !authorized.has(k));
  const absent = [...authorized].filter((k) => !inCsr.has(k));
  if (extra.length > 0 || absent.length > 0) {
    const parts = [
      ...(extra.length ? [`names not authorized: ${extra.join(', ')}`] : []),
      ...(absent.length ? [`authorized names missing: ${absent.join(', ')}`] : []),
    ];
    throw refuse('csr', parts.join('; '), 'names_mismatch');
  }
}

function pemBlocks(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g) ?? [];
}
