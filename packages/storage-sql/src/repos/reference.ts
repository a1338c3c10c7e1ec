import {
  type CertificateProfile,
  CertwrightError,
  type Issuer,
  type IssuerConfig,
  type IssuerRepository,
  type IssuerType,
  newId,
  notFound,
  type Owner,
  type OwnerRepository,
  type ProfileRepository,
  RENEWAL_POLICY_LIMITS,
  type RenewalPolicy,
  type RenewalPolicyRepository,
  slugify,
  type Team,
  type TeamRepository,
} from '@certwright/core';
import { type Selectable, type SqlBool, sql } from 'kysely';
import { atomic, type Ctx, count, defined, likeContains, parseJson, toBool, toNum } from '../context.js';
import type { IssuersTable, ProfilesTable, RenewalPoliciesTable } from '../schema.js';
import { deleteById, listPage, lockFound, requireFound, updateById } from './crud.js';
import { openSecrets, profileIdByPath, readEnrollment, writeEnrollment } from './enrollment.js';

/** The `search` of a reference-data list: a case-insensitive substring of the name, wildcards literal. */
const nameContains = (search: string) => sql<SqlBool>`lower(${sql.ref('name')}) like ${likeContains(search)}`;

/** How many certificates reference `id` through `column`. */
async function certificateRefs(
  ctx: Ctx,
  column: 'issuer_id' | 'owner_id' | 'team_id' | 'profile_id' | 'renewal_policy_id',
  id: string,
): Promise<number> {
  return count(
    await ctx.db
      .selectFrom('certificates')
      .select((eb) => eb.fn.countAll().as('n'))
      .where(column, '=', id)
      .executeTakeFirst(),
  );
}

export function ownerRepository(ctx: Ctx): OwnerRepository {
  const get = async (id: string) =>
    (await ctx.db.selectFrom('owners').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
  const require = requireFound('owner', get);
  return {
    get,
    require,
    async create(input) {
      const now = input.created_at ?? ctx.clock.now();
      const owner: Owner = {
        id: input.id ?? newId('owner'),
        name: input.name,
        email: input.email ?? null,
        created_at: now,
        updated_at: now,
      };
      await ctx.db.insertInto('owners').values(owner).execute();
      return owner;
    },
    async update(id, patch) {
      await require(id);
      await updateById(ctx, 'owners', id, defined({ name: patch.name, email: patch.email }));
      return require(id);
    },
    delete: (id) => deleteById(ctx, 'owners', id, 'owner'),
    async list(query = {}) {
      let base = ctx.db.selectFrom('owners');
      if (query.search) base = base.where(nameContains(query.search));
      return listPage(base, query, (q) => q.selectAll().orderBy('name').orderBy('id'));
    },
    async references(id) {
      return { certificates: await certificateRefs(ctx, 'owner_id', id) };
    },
  };
}

export function teamRepository(ctx: Ctx): TeamRepository {
  const get = async (id: string) =>
    (await ctx.db.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
  const require = requireFound('team', get);
  return {
    get,
    require,
    async create(input) {
      const now = input.created_at ?? ctx.clock.now();
      const team: Team = {
        id: input.id ?? newId('team'),
        name: input.name,
        description: input.description ?? null,
        created_at: now,
        updated_at: now,
      };
      await ctx.db.insertInto('teams').values(team).execute();
      return team;
    },
    async update(id, patch) {
      await require(id);
      await updateById(ctx, 'teams', id, defined({ name: patch.name, description: patch.description }));
      return require(id);
    },
    delete: (id) => deleteById(ctx, 'teams', id, 'team'),
    async list(query = {}) {
      let base = ctx.db.selectFrom('teams');
      if (query.search) base = base.where(nameContains(query.search));
      return listPage(base, query, (q) => q.selectAll().orderBy('name').orderBy('id'));
    },
    async references(id) {
      return { certificates: await certificateRefs(ctx, 'team_id', id) };
    },
  };
}

export const issuerConfigContext = (id: string) => `issuer:${id}:config`;

function toIssuer(r: Selectable<IssuersTable>): Issuer {
  return {
    id: r.id,
    name: r.name,
    type: r.type as IssuerType,
    enabled: toBool(r.enabled),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function issuerRepository(ctx: Ctx): IssuerRepository {
  const row = (id: string, lock = false) => {
    const q = ctx.db.selectFrom('issuers').selectAll().where('id', '=', id);
    return (lock ? q.forUpdate() : q).executeTakeFirst();
  };
  const read = async (id: string, lock = false) => {
    const r = await row(id, lock);
    return r ? toIssuer(r) : null;
  };
  const get = (id: string) => read(id);
  const require = requireFound('issuer', get);
  return {
    get,
    require,
    lockForUpdate: lockFound(ctx, 'issuer', (id) => read(id, true)),
    async getWithConfig(id) {
      const r = await row(id);
      if (!r) return null;
      const config = JSON.parse(await ctx.box.open(r.config_sealed, issuerConfigContext(id))) as IssuerConfig;
      return { ...toIssuer(r), config };
    },
    async create(input) {
      const now = input.created_at ?? ctx.clock.now();
      const issuer: Issuer = {
        id: input.id ?? newId('issuer'),
        name: input.name,
        type: input.type,
        enabled: input.enabled ?? true,
        created_at: now,
        updated_at: now,
      };
      const config_sealed = await ctx.box.seal(
        JSON.stringify(input.config ?? {}),
        issuerConfigContext(issuer.id),
      );
      await ctx.db
        .insertInto('issuers')
        .values({ ...issuer, config_sealed })
        .execute();
      return issuer;
    },
    async update(id, patch) {
      await require(id);
      const config_sealed =
        patch.config === undefined
          ? undefined
          : await ctx.box.seal(JSON.stringify(patch.config), issuerConfigContext(id));
      await updateById(
        ctx,
        'issuers',
        id,
        defined({ name: patch.name, type: patch.type, enabled: patch.enabled, config_sealed }),
      );
      return require(id);
    },
    async updateConfigState(id, config) {
      if (!ctx.inTx) {
        throw new CertwrightError(
          'internal',
          `updateConfigState of issuer '${id}' called outside a transaction; lock the issuer in storage.transaction() first`,
        );
      }
      const config_sealed = await ctx.box.seal(JSON.stringify(config), issuerConfigContext(id));
      // No updated_at: the point of this method (see the port).
      const result = await ctx.db
        .updateTable('issuers')
        .set({ config_sealed })
        .where('id', '=', id)
        .executeTakeFirst();
      // The sealed value never repeats (fresh nonce), so MySQL's "changed rows" counts it too.
      if (result.numUpdatedRows === 0n) throw notFound('issuer', id);
    },
    delete: (id) => deleteById(ctx, 'issuers', id, 'issuer'),
    async list(query = {}) {
      let base = ctx.db.selectFrom('issuers');
      if (query.type !== undefined) base = base.where('type', '=', query.type);
      if (query.enabled !== undefined) base = base.where('enabled', '=', query.enabled);
      if (query.search) base = base.where(nameContains(query.search));
      return listPage(
        base,
        query,
        (q) =>
          q
            .select(['id', 'name', 'type', 'enabled', 'created_at', 'updated_at'])
            .orderBy('name')
            .orderBy('id'),
        (r) => toIssuer({ ...r, config_sealed: '' }),
      );
    },
    async references(id) {
      const versions = count(
        await ctx.db
          .selectFrom('certificate_versions')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('issuer_id', '=', id)
          .executeTakeFirst(),
      );
      return { certificates: await certificateRefs(ctx, 'issuer_id', id), certificate_versions: versions };
    },
  };
}

function toProfile(r: Selectable<ProfilesTable>): CertificateProfile {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    allowed_key_algorithms: parseJson(r.allowed_key_algorithms, []),
    allowed_ekus: parseJson(r.allowed_ekus, []),
    required_csr_attributes: parseJson(r.required_csr_attributes, []),
    must_staple: toBool(r.must_staple),
    allow_ip_sans: toBool(r.allow_ip_sans),
    short_lived_validity_hours:
      r.short_lived_validity_hours === null ? null : toNum(r.short_lived_validity_hours),
    max_validity_days: toNum(r.max_validity_days),
    key_generation: r.key_generation as CertificateProfile['key_generation'],
    ...readEnrollment(r.enrollment_settings),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function profileRepository(ctx: Ctx): ProfileRepository {
  const row = (id: string) =>
    ctx.db.selectFrom('certificate_profiles').selectAll().where('id', '=', id).executeTakeFirst();
  const get = async (id: string) => {
    const r = await row(id);
    return r ? toProfile(r) : null;
  };
  const require = requireFound('certificate profile', get);
  return {
    get,
    require,
    async getWithSecrets(id) {
      const r = await row(id);
      if (!r) return null;
      return { profile: toProfile(r), secrets: await openSecrets(ctx, id, r.enrollment_secrets_sealed) };
    },
    async findByPathId(protocol, pathId) {
      const id = await profileIdByPath(ctx, protocol, pathId);
      return id ? get(id) : null;
    },
    create: (input) =>
      atomic(ctx, async (ctx) => {
        const now = input.created_at ?? ctx.clock.now();
        const id = input.id ?? newId('profile');
        const base = readEnrollment(null);
        const profile: CertificateProfile = {
          id,
          name: input.name,
          description: input.description ?? null,
          allowed_key_algorithms: input.allowed_key_algorithms ?? [],
          allowed_ekus: input.allowed_ekus ?? [],
          required_csr_attributes: input.required_csr_attributes ?? [],
          must_staple: input.must_staple ?? false,
          allow_ip_sans: input.allow_ip_sans ?? false,
          short_lived_validity_hours: input.short_lived_validity_hours ?? null,
          max_validity_days: input.max_validity_days,
          key_generation: input.key_generation ?? 'server',
          enrollment: input.enrollment ?? base.enrollment,
          acme: input.acme ?? base.acme,
          est: input.est ?? base.est,
          scep: input.scep ?? base.scep,
          enrollment_secrets_set: {},
          created_at: now,
          updated_at: now,
        };
        const {
          enrollment_secrets_set: _names,
          enrollment: _e,
          acme: _a,
          est: _est,
          scep: _scep,
          ...columns
        } = profile;
        await ctx.db
          .insertInto('certificate_profiles')
          .values({
            ...columns,
            allowed_key_algorithms: JSON.stringify(profile.allowed_key_algorithms),
            allowed_ekus: JSON.stringify(profile.allowed_ekus),
            required_csr_attributes: JSON.stringify(profile.required_csr_attributes),
            enrollment_settings: null,
            enrollment_secrets_sealed: null,
          })
          .execute();
        const stored = await writeEnrollment(ctx, id, profile, {
          ...(input.enrollment_secrets ? { enrollment_secrets: input.enrollment_secrets } : {}),
        });
        await ctx.db.updateTable('certificate_profiles').set(stored).where('id', '=', id).execute();
        return { ...profile, ...readEnrollment(stored.enrollment_settings) };
      }),
    update: (id, patch) =>
      atomic(ctx, async (ctx) => {
        const current = await profileRepository(ctx).require(id);
        const enrollment =
          patch.enrollment || patch.acme || patch.est || patch.scep || patch.enrollment_secrets
            ? await writeEnrollment(ctx, id, current, {
                ...(patch.enrollment ? { enrollment: patch.enrollment } : {}),
                ...(patch.acme ? { acme: patch.acme } : {}),
                ...(patch.est ? { est: patch.est } : {}),
                ...(patch.scep ? { scep: patch.scep } : {}),
                ...(patch.enrollment_secrets ? { enrollment_secrets: patch.enrollment_secrets } : {}),
              })
            : {};
        await updateById(
          ctx,
          'certificate_profiles',
          id,
          defined({
            name: patch.name,
            description: patch.description,
            must_staple: patch.must_staple,
            allow_ip_sans: patch.allow_ip_sans,
            short_lived_validity_hours: patch.short_lived_validity_hours,
            max_validity_days: patch.max_validity_days,
            key_generation: patch.key_generation,
            allowed_key_algorithms:
              patch.allowed_key_algorithms && JSON.stringify(patch.allowed_key_algorithms),
            allowed_ekus: patch.allowed_ekus && JSON.stringify(patch.allowed_ekus),
            required_csr_attributes:
              patch.required_csr_attributes && JSON.stringify(patch.required_csr_attributes),
            ...enrollment,
          }),
        );
        return profileRepository(ctx).require(id);
      }),
    delete: (id) => deleteById(ctx, 'certificate_profiles', id, 'certificate profile'),
    async list(query = {}) {
      let base = ctx.db.selectFrom('certificate_profiles');
      if (query.search) base = base.where(nameContains(query.search));
      return listPage(base, query, (q) => q.selectAll().orderBy('name').orderBy('id'), toProfile);
    },
    async references(id) {
      const accounts = count(
        await ctx.db
          .selectFrom('acme_accounts')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('profile_id', '=', id)
          .executeTakeFirst(),
      );
      return { certificates: await certificateRefs(ctx, 'profile_id', id), acme_accounts: accounts };
    },
  };
}

function toPolicy(r: Selectable<RenewalPoliciesTable>): RenewalPolicy {
  return {
    id: r.id,
    name: r.name,
    renewal_window_days: toNum(r.renewal_window_days),
    max_retries: r.max_retries === null ? null : toNum(r.max_retries),
    retry_interval_seconds: toNum(r.retry_interval_seconds),
    alert_thresholds_days: parseJson<number[]>(r.alert_thresholds_days, []),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function renewalPolicyRepository(ctx: Ctx): RenewalPolicyRepository {
  const get = async (id: string) => {
    const r = await ctx.db.selectFrom('renewal_policies').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? toPolicy(r) : null;
  };
  const require = requireFound('renewal policy', get);
  return {
    get,
    require,
    async getByName(name) {
      const r = await ctx.db
        .selectFrom('renewal_policies')
        .selectAll()
        .where('name', '=', name)
        .executeTakeFirst();
      return r ? toPolicy(r) : null;
    },
    async create(input) {
      const now = input.created_at ?? ctx.clock.now();
      const slug = slugify(input.name);
      const policy: RenewalPolicy = {
        id: input.id ?? (slug ? `rp-${slug}` : newId('renewalPolicy')),
        name: input.name,
        renewal_window_days: input.renewal_window_days ?? RENEWAL_POLICY_LIMITS.windowDays.default,
        max_retries: input.max_retries ?? null,
        retry_interval_seconds:
          input.retry_interval_seconds ?? RENEWAL_POLICY_LIMITS.retryIntervalSeconds.default,
        alert_thresholds_days: input.alert_thresholds_days ?? [
          ...RENEWAL_POLICY_LIMITS.alertThresholdDays.default,
        ],
        created_at: now,
        updated_at: now,
      };
      await ctx.db
        .insertInto('renewal_policies')
        .values({ ...policy, alert_thresholds_days: JSON.stringify(policy.alert_thresholds_days) })
        .execute();
      return policy;
    },
    async update(id, patch) {
      await require(id);
      await updateById(
        ctx,
        'renewal_policies',
        id,
        defined({
          name: patch.name,
          renewal_window_days: patch.renewal_window_days,
          max_retries: patch.max_retries,
          retry_interval_seconds: patch.retry_interval_seconds,
          alert_thresholds_days: patch.alert_thresholds_days && JSON.stringify(patch.alert_thresholds_days),
        }),
      );
      return require(id);
    },
    delete: (id) => deleteById(ctx, 'renewal_policies', id, 'renewal policy'),
    async list(query = {}) {
      let base = ctx.db.selectFrom('renewal_policies');
      if (query.search) base = base.where(nameContains(query.search));
      return listPage(base, query, (q) => q.selectAll().orderBy('name').orderBy('id'), toPolicy);
    },
    async references(id) {
      return { certificates: await certificateRefs(ctx, 'renewal_policy_id', id) };
    },
  };
}
