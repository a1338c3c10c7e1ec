import { z } from 'zod';
import { hashPassword } from '../crypto/password-hash.js';
import {
  type AllowedKeyAlgorithm,
  acmeSettingsSchema,
  allowedKeyAlgorithmSchema,
  type CertificateProfile,
  DEFAULT_ACME_SETTINGS,
  DEFAULT_ENROLLMENT_DEFAULTS,
  DEFAULT_EST_SETTINGS,
  DEFAULT_SCEP_SETTINGS,
  type EnrollmentSecrets,
  enrollmentDefaultsSchema,
  estBasicCredentialSchema,
  estSettingsSchema,
  extendedKeyUsageSchema,
  keyGenerationModeSchema,
  scepSettingsSchema,
} from '../domain/profile.js';
import { conflict, type FieldIssue, notFound, validationError } from '../errors.js';
import { csrAttributesFor } from '../pki/csr-attributes.js';
import { assertPostQuantumRuntime } from '../pki/post-quantum-runtime.js';
import type { Storage } from '../ports/storage.js';
import type { AuditService } from './audit.js';
import { configEvent } from './audit.js';
import type { Actor, ServiceDeps } from './context.js';
import { invalidReference, nameTaken, type Paged, parseInput, stillReferenced } from './input.js';
import { pageQuerySchema } from './paging.js';

/** 397 days: the CA/Browser Forum ceiling for public TLS certificates, a safe default. */
export const DEFAULT_MAX_VALIDITY_DAYS = 397;

/**
 * A required CSR attribute must be one the EST `/csrattrs` answer can advertise and enrollment
 * can find in a CSR (docs/protocols/est.md): a distinguished-name attribute (`CN`, `O`,
 * `serialNumber` …), a PKCS#9 attribute (`challengePassword`, `unstructuredName`,
 * `extensionRequest`), an extended key usage name, or a dotted OID. Any other name would be
 * demanded of every CSR and found in none.
 */
const requiredCsrAttributeSchema = z
  .string()
  .min(1)
  .max(128)
  .refine((name) => csrAttributesFor([name]).dropped.length === 0, {
    message:
      'is not an attribute a CSR can carry: a DN attribute (CN, O, OU, C, ST, L, serialNumber …), challengePassword, unstructuredName, extensionRequest, an EKU name (serverAuth …) or a dotted OID',
  });

export const profileCreateSchema = z
  .object({
    name: z.string().trim().min(1).max(255),
    description: z.string().max(2000).nullable().optional(),
    allowed_key_algorithms: z.array(allowedKeyAlgorithmSchema).max(16).optional(),
    allowed_ekus: z.array(extendedKeyUsageSchema).max(16).optional(),
    required_csr_attributes: z.array(requiredCsrAttributeSchema).max(64).optional(),
    must_staple: z.boolean().optional(),
    /** Whether certificates under the profile may name IP addresses; false when omitted. */
    allow_ip_sans: z.boolean().optional(),
    /** Lifetime in hours up to which certificates are short-lived (RFC 9608); null: none. */
    short_lived_validity_hours: z.number().int().min(1).max(720).nullable().optional(),
    max_validity_days: z.number().int().min(1).max(3650).optional(),
    key_generation: keyGenerationModeSchema.optional(),
    /** Given fields replace the stored ones; omitted fields keep theirs. */
    enrollment: enrollmentDefaultsSchema.partial().strict().optional(),
    acme: acmeSettingsSchema
      .extend({ rate_limits: acmeSettingsSchema.shape.rate_limits.partial().strict() })
      .partial()
      .strict()
      .optional(),
    est: estSettingsSchema
      .partial()
      .extend({
        /** Replaces every stored credential (`[]` removes them all); write-only, kept as scrypt hashes. */
        basic_credentials: z
          .array(estBasicCredentialSchema)
          .max(32)
          .refine(
            (list) => new Set(list.map((c) => c.username)).size === list.length,
            'usernames must be unique',
          )
          .optional(),
      })
      .strict()
      .optional(),
    scep: scepSettingsSchema
      .extend({ mdm: scepSettingsSchema.shape.mdm.partial().strict() })
      .partial()
      .extend({
        /**
         * The static challenge password clients put in their CSR's challengePassword; write-only,
         * kept as an scrypt hash. `null` removes it.
         */
        challenge_password: z.string().min(8).max(255).nullable().optional(),
      })
      .strict()
      .optional(),
  })
  // An unknown member (`id`, a typo such as `max_validty_days`) is 400 naming it, not dropped.
  .strict();
export const profileUpdateSchema = profileCreateSchema.partial();
export const profileListSchema = pageQuerySchema.extend({
  search: z.string().max(255).optional().describe('case-insensitive substring of the name'),
});
export type ProfileCreate = z.input<typeof profileCreateSchema>;
export type ProfileUpdate = z.input<typeof profileUpdateSchema>;
export type ProfileListQuery = z.input<typeof profileListSchema>;

/**
 * Certificate profiles: what a certificate issued under them may look like (key algorithms,
 * EKUs, CSR attributes, must-staple, validity) and where its key is generated.
 */
export class ProfileService {
  #revision = 0;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
  ) {}

  /**
   * Grows after every create, update and delete through this service has committed (or
   * failed): a cache of profile reads in this process (the protocol handlers' profile lookup)
   * that remembers the revision it read at knows whether this process changed a profile since.
   */
  get revision(): number {
    return this.#revision;
  }

  async #changing<T>(change: () => Promise<T>): Promise<T> {
    try {
      return await change();
    } finally {
      this.#revision++;
    }
  }

  async create(actor: Actor, input: ProfileCreate): Promise<CertificateProfile> {
    const data = parseInput(profileCreateSchema, input);
    assertKeyAlgorithmsRunnable(data.allowed_key_algorithms);
    const secrets = await hashedSecrets(data);
    return this.#changing(() => this.#create(actor, data, secrets));
  }

  async #create(
    actor: Actor,
    data: z.output<typeof profileCreateSchema>,
    secrets: Awaited<ReturnType<typeof hashedSecrets>>,
  ): Promise<CertificateProfile> {
    return this.deps.storage.transaction(async (tx) => {
      const settings = await enrollmentSettings(tx, null, data);
      const profile = await tx.profiles
        .create({
          ...(settings.enrollment ? settings : {}),
          ...(secrets ? { enrollment_secrets: withSecrets({}, secrets) } : {}),
          name: data.name,
          description: data.description ?? null,
          allowed_key_algorithms: data.allowed_key_algorithms ?? [],
          allowed_ekus: data.allowed_ekus ?? [],
          required_csr_attributes: data.required_csr_attributes ?? [],
          must_staple: data.must_staple ?? false,
          allow_ip_sans: data.allow_ip_sans ?? false,
          short_lived_validity_hours: data.short_lived_validity_hours ?? null,
          max_validity_days: data.max_validity_days ?? DEFAULT_MAX_VALIDITY_DAYS,
          key_generation: data.key_generation ?? 'server',
        })
        .catch(nameTaken(data.name, 'profile'));
      await this.audit.record(
        actor,
        configEvent('profile_created', 'profile', profile.id, redacted(data)),
        tx,
      );
      return profile;
    });
  }

  async get(id: string): Promise<CertificateProfile> {
    const profile = await this.deps.storage.profiles.get(id);
    if (!profile) throw notFound('profile', id);
    return profile;
  }

  async list(query: ProfileListQuery = {}): Promise<Paged<CertificateProfile>> {
    const q = parseInput(profileListSchema, query);
    const result = await this.deps.storage.profiles.list({
      page: q.page,
      perPage: q.per_page,
      search: q.search,
    });
    return { data: result.items, total: result.total, page: q.page, per_page: q.per_page };
  }

  async update(actor: Actor, id: string, input: ProfileUpdate): Promise<CertificateProfile> {
    const data = parseInput(profileUpdateSchema, input);
    assertKeyAlgorithmsRunnable(data.allowed_key_algorithms);
    const secrets = await hashedSecrets(data);
    return this.#changing(() => this.#update(actor, id, data, secrets));
  }

  async #update(
    actor: Actor,
    id: string,
    data: z.output<typeof profileUpdateSchema>,
    secrets: Awaited<ReturnType<typeof hashedSecrets>>,
  ): Promise<CertificateProfile> {
    return this.deps.storage.transaction(async (tx) => {
      const current = await tx.profiles.getWithSecrets(id);
      if (!current) throw notFound('profile', id);
      const settings = await enrollmentSettings(tx, current.profile, data);
      const { enrollment: _enrollment, acme: _acme, est: _est, scep: _scep, ...fields } = data;
      const profile = await tx.profiles
        .update(id, {
          ...fields,
          ...settings,
          ...(secrets ? { enrollment_secrets: withSecrets(current.secrets, secrets) } : {}),
        })
        .catch(nameTaken(data.name, 'profile'));
      await this.audit.record(actor, configEvent('profile_updated', 'profile', id, redacted(data)), tx);
      return profile;
    });
  }

  async delete(actor: Actor, id: string): Promise<void> {
    await this.#changing(() => this.#delete(actor, id));
  }

  async #delete(actor: Actor, id: string): Promise<void> {
    await this.deps.storage.transaction(async (tx) => {
      if (!(await tx.profiles.get(id))) throw notFound('profile', id);
      const refused = stillReferenced('profile', id, await tx.profiles.references(id));
      if (refused) throw refused;
      await tx.profiles.delete(id);
      await this.audit.record(actor, configEvent('profile_deleted', 'profile', id), tx);
    });
  }
}

/**
 * The enrollment settings a create or update stores: the given fields over the current (or
 * default) ones, checked as a whole. Referenced records must exist; a protocol can be enabled
 * only with complete enrollment defaults (every certificate it creates needs all four); a
 * path id must not be another profile's.
 */
async function enrollmentSettings(
  tx: Storage,
  current: CertificateProfile | null,
  data: z.output<typeof profileUpdateSchema>,
): Promise<Partial<Pick<CertificateProfile, 'enrollment' | 'acme' | 'est' | 'scep'>>> {
  if (!data.enrollment && !data.acme && !data.est && !data.scep) return {};
  const base = current ?? {
    enrollment: DEFAULT_ENROLLMENT_DEFAULTS,
    acme: DEFAULT_ACME_SETTINGS,
    est: DEFAULT_EST_SETTINGS,
    scep: DEFAULT_SCEP_SETTINGS,
  };
  const enrollment = { ...base.enrollment, ...data.enrollment };
  const { basic_credentials: _credentials, ...estPatch } = data.est ?? {};
  const est = parseInput(estSettingsSchema, { ...base.est, ...estPatch });
  const { challenge_password: _password, ...scepPatch } = data.scep ?? {};
  const scep = parseInput(scepSettingsSchema, {
    ...base.scep,
    ...scepPatch,
    mdm: { ...base.scep.mdm, ...scepPatch.mdm },
  });
  const acme = parseInput(acmeSettingsSchema, {
    ...base.acme,
    ...data.acme,
    rate_limits: { ...base.acme.rate_limits, ...data.acme?.rate_limits },
  });
  const missing: FieldIssue[] = [];
  const lookups = [
    ['issuer_id', enrollment.issuer_id, (id: string) => tx.issuers.get(id)],
    ['owner_id', enrollment.owner_id, (id: string) => tx.owners.get(id)],
    ['team_id', enrollment.team_id, (id: string) => tx.teams.get(id)],
    ['renewal_policy_id', enrollment.renewal_policy_id, (id: string) => tx.renewalPolicies.get(id)],
  ] as const;
  for (const [field, id, get] of lookups) {
    if (id !== null && !(await get(id))) {
      missing.push({ field: `enrollment.${field}`, message: `'${id}' does not exist` });
    }
  }
  if (missing.length > 0) throw invalidReference(missing);
  for (const [protocol, block] of [
    ['acme', acme],
    ['est', est],
    ['scep', scep],
  ] as const) {
    if (block.enabled) {
      const unset = lookups.filter(([, id]) => id === null);
      if (unset.length > 0) {
        throw validationError(
          unset.map(([field]) => ({
            field: `enrollment.${field}`,
            message: `is required while ${protocol}.enabled is true (certificates the protocol creates need it)`,
          })),
        );
      }
    }
    if (block.path_id !== null) {
      const holder = await tx.profiles.findByPathId(protocol, block.path_id);
      if (holder && holder.id !== current?.id) {
        throw conflict(
          `${protocol.toUpperCase()} path id '${block.path_id}' is used by profile '${holder.id}'`,
          {
            resource: 'profile',
            field: `${protocol}.path_id`,
          },
        );
      }
    }
  }
  return { enrollment, acme, est, scep };
}

type StoredCredential = { username: string; password_hash: string };

/** The write-only secrets an input replaces, hashed (before any transaction opens). */
interface HashedSecrets {
  /** EST Basic credentials; `[]` removes them. */
  credentials?: StoredCredential[];
  /** scrypt hash of the SCEP challenge password; null removes it. */
  scepChallenge?: string | null;
}

async function hashedSecrets(data: z.output<typeof profileUpdateSchema>): Promise<HashedSecrets | undefined> {
  const given = data.est?.basic_credentials;
  const challenge = data.scep?.challenge_password;
  if (!given && challenge === undefined) return undefined;
  return {
    ...(given
      ? {
          credentials: await Promise.all(
            given.map(async (c) => ({ username: c.username, password_hash: await hashPassword(c.password) })),
          ),
        }
      : {}),
    ...(challenge === undefined
      ? {}
      : { scepChallenge: challenge === null ? null : await hashPassword(challenge) }),
  };
}

/** The profile's secrets with the given ones replaced (an empty value removes the field). */
function withSecrets(secrets: EnrollmentSecrets, given: HashedSecrets): EnrollmentSecrets {
  let next = secrets;
  if (given.credentials) {
    const { basic_credentials: _old, ...rest } = next.est ?? {};
    const est =
      given.credentials.length > 0 ? { ...rest, basic_credentials: JSON.stringify(given.credentials) } : rest;
    next = { ...next, est };
  }
  if (given.scepChallenge !== undefined) {
    const { challenge_password: _old, ...rest } = next.scep ?? {};
    const scep = given.scepChallenge === null ? rest : { ...rest, challenge_password: given.scepChallenge };
    next = { ...next, scep };
  }
  return next;
}

/** The input as audit events may show it: credential usernames, never passwords. */
function redacted(data: z.output<typeof profileUpdateSchema>): object {
  let out: z.output<typeof profileUpdateSchema> | object = data;
  if (data.est?.basic_credentials) {
    out = {
      ...out,
      est: { ...data.est, basic_credentials: data.est.basic_credentials.map((c) => c.username) },
    };
  }
  if (data.scep?.challenge_password !== undefined) {
    const { challenge_password, ...scep } = data.scep;
    out = { ...out, scep: { ...scep, challenge_password_set: challenge_password !== null } };
  }
  return out;
}

/** A profile allowing post-quantum keys is refused on a runtime that cannot verify them. */
function assertKeyAlgorithmsRunnable(allowed: readonly AllowedKeyAlgorithm[] | undefined): void {
  const pq = allowed?.find((a) => a.algorithm === 'ML-DSA' || a.algorithm === 'SLH-DSA');
  if (pq) assertPostQuantumRuntime(`a profile allowing ${pq.algorithm} keys`, 'allowed_key_algorithms');
}
