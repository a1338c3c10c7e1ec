import {
  type AcmeSettings,
  DEFAULT_ACME_SETTINGS,
  DEFAULT_ENROLLMENT_DEFAULTS,
  DEFAULT_EST_SETTINGS,
  DEFAULT_SCEP_SETTINGS,
  ENROLLMENT_PROTOCOLS,
  type EnrollmentDefaults,
  type EnrollmentProtocol,
  type EnrollmentSecrets,
  type EstSettings,
  type ProfileEnrollment,
  type ScepSettings,
} from '@certwright/core';
import type { Ctx } from '../context.js';

/**
 * Enrollment settings of a profile as stored: one JSON column `enrollment_settings`
 * (`{enrollment, acme, …}`), the write-only secrets sealed in `enrollment_secrets_sealed`
 * (`{protocol: {field: value}}`), and one `enrollment_paths` row per protocol path id (its
 * primary key keeps path ids unique per protocol).
 */

interface StoredSettings {
  enrollment?: Partial<EnrollmentDefaults>;
  acme?: Partial<AcmeSettings>;
  est?: Partial<EstSettings>;
  scep?: Partial<ScepSettings>;
  /** Names of the secret fields holding a value, by protocol. */
  secrets_set?: Partial<Record<EnrollmentProtocol, string[]>>;
}

export const secretsContext = (profileId: string) => `profile:${profileId}:enrollment-secrets`;

/** The record's enrollment part; blocks missing from the stored JSON read as their defaults. */
export function readEnrollment(text: string | null): ProfileEnrollment {
  const stored: StoredSettings = text ? (JSON.parse(text) as StoredSettings) : {};
  return {
    enrollment: { ...DEFAULT_ENROLLMENT_DEFAULTS, ...stored.enrollment },
    acme: {
      ...DEFAULT_ACME_SETTINGS,
      ...stored.acme,
      rate_limits: { ...DEFAULT_ACME_SETTINGS.rate_limits, ...stored.acme?.rate_limits },
    },
    est: { ...DEFAULT_EST_SETTINGS, ...stored.est },
    scep: {
      ...DEFAULT_SCEP_SETTINGS,
      ...stored.scep,
      mdm: { ...DEFAULT_SCEP_SETTINGS.mdm, ...stored.scep?.mdm },
    },
    enrollment_secrets_set: stored.secrets_set ?? {},
  };
}

/** Column values for a profile's enrollment part, after `patch` is applied to `current`. */
export async function writeEnrollment(
  ctx: Ctx,
  profileId: string,
  current: ProfileEnrollment,
  patch: {
    enrollment?: EnrollmentDefaults;
    acme?: AcmeSettings;
    est?: EstSettings;
    scep?: ScepSettings;
    enrollment_secrets?: EnrollmentSecrets;
  },
): Promise<{ enrollment_settings: string; enrollment_secrets_sealed?: string }> {
  const next: ProfileEnrollment = {
    enrollment: patch.enrollment ?? current.enrollment,
    acme: patch.acme ?? current.acme,
    est: patch.est ?? current.est,
    scep: patch.scep ?? current.scep,
    enrollment_secrets_set: current.enrollment_secrets_set,
  };
  let sealed: string | undefined;
  if (patch.enrollment_secrets) {
    const secrets = patch.enrollment_secrets;
    next.enrollment_secrets_set = Object.fromEntries(
      Object.entries(secrets)
        .filter(([, fields]) => fields && Object.keys(fields).length > 0)
        .map(([protocol, fields]) => [protocol, Object.keys(fields ?? {}).sort()]),
    );
    sealed = await ctx.box.seal(JSON.stringify(secrets), secretsContext(profileId));
  }
  await syncPaths(ctx, profileId, next);
  const settings: StoredSettings = {
    enrollment: next.enrollment,
    acme: next.acme,
    est: next.est,
    scep: next.scep,
    secrets_set: next.enrollment_secrets_set,
  };
  return {
    enrollment_settings: JSON.stringify(settings),
    ...(sealed === undefined ? {} : { enrollment_secrets_sealed: sealed }),
  };
}

/** Makes `enrollment_paths` hold exactly the profile's path ids; a taken one is `conflict`. */
async function syncPaths(ctx: Ctx, profileId: string, settings: ProfileEnrollment): Promise<void> {
  await ctx.db.deleteFrom('enrollment_paths').where('profile_id', '=', profileId).execute();
  const rows = ENROLLMENT_PROTOCOLS.flatMap((protocol) => {
    const pathId = settings[protocol].path_id;
    return pathId ? [{ protocol, path_id: pathId, profile_id: profileId }] : [];
  });
  if (rows.length > 0) await ctx.db.insertInto('enrollment_paths').values(rows).execute();
}

export async function openSecrets(
  ctx: Ctx,
  profileId: string,
  sealed: string | null,
): Promise<EnrollmentSecrets> {
  if (!sealed) return {};
  return JSON.parse(await ctx.box.open(sealed, secretsContext(profileId))) as EnrollmentSecrets;
}

export async function profileIdByPath(
  ctx: Ctx,
  protocol: EnrollmentProtocol,
  pathId: string,
): Promise<string | null> {
  const row = await ctx.db
    .selectFrom('enrollment_paths')
    .select('profile_id')
    .where('protocol', '=', protocol)
    .where('path_id', '=', pathId)
    .executeTakeFirst();
  return row?.profile_id ?? null;
}
