import { z } from 'zod';
import { CertwrightError } from '../../errors.js';
import { pemDecodeCertificates } from '../../pki/pem.js';

/**
 * The settings of an ACME issuer (`config` of an issuer of type `ACME`), checked when the
 * issuer is created or its config replaced. Credentials among them (`eab_hmac_key`) are sealed
 * with the rest of the config and never returned by any API (docs/api/issuers.md).
 */

const url = z
  .string()
  .max(2048)
  .refine((value) => {
    try {
      const parsed = new URL(value);
      return (
        (parsed.protocol === 'https:' || parsed.protocol === 'http:') && !parsed.username && !parsed.password
      );
    } catch {
      return false;
    }
  }, 'must be an absolute http(s) URL without credentials');

export const ACME_ISSUER_CHALLENGE_TYPES = ['http-01', 'dns-01'] as const;

export const acmeIssuerSettingsSchema = z
  .object({
    /** The CA's ACME directory (RFC 8555 §7.1.1). */
    directory_url: url,
    /** Account contact URLs (`mailto:`), RFC 8555 §7.3. */
    contact: z
      .array(
        z
          .string()
          .max(320)
          .regex(/^mailto:[^\s,@]+@[^\s,@]+$/, 'must be a mailto: URL'),
      )
      .max(5)
      .optional(),
    /** External account binding (RFC 8555 §7.3.4): the key id and HMAC key the CA handed out. */
    eab_kid: z.string().min(1).max(512).optional(),
    eab_hmac_key: z
      .string()
      .min(16)
      .max(1024)
      .regex(/^[A-Za-z0-9_-]+$/, 'must be base64url without padding')
      .optional(),
    /** Which challenge certwright answers; identifiers that cannot use it (IP addresses with dns-01) fall back to http-01. */
    challenge_type: z.enum(ACME_ISSUER_CHALLENGE_TYPES).optional(),
    /** PEM bundle trusted for the directory's TLS instead of the system roots (a private ACME server). */
    ca_bundle_pem: z.string().min(1).max(65_536).optional(),
    /** An ACME profile the CA advertises in its directory (draft-aaron-acme-profiles). */
    profile: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9._-]+$/)
      .optional(),
    /** Where dns-01 TXT records are published (docs/api/issuers.md, "DNS providers"). */
    dns_provider: z
      .object({
        type: z.literal('pebble-challtestsrv'),
        management_url: url,
      })
      .strict()
      .optional(),
  })
  .strict();

export type AcmeIssuerSettings = z.infer<typeof acmeIssuerSettingsSchema>;

/** The config keys the ACME connector writes itself: the account (key sealed with the config) and the last CA chain. */
export const ACME_MANAGED_CONFIG_KEYS: readonly string[] = Object.freeze([
  'acme_account',
  'acme_ca_chain_pem',
]);

const invalid = (fields: { field: string; message: string }[]) =>
  new CertwrightError(
    'validation_failed',
    `ACME issuer settings refused: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}`,
    { fields },
  );

/** Checks the caller's settings (managed keys were refused before); throws naming each bad key. */
export function validateAcmeSettings(config: Record<string, unknown>): AcmeIssuerSettings {
  const parsed = acmeIssuerSettingsSchema.safeParse(config);
  if (!parsed.success) {
    throw invalid(
      parsed.error.issues.map((issue) => ({
        field: ['config', ...issue.path.map(String)].join('.'),
        message:
          issue.code === 'unrecognized_keys'
            ? `has unknown setting(s) ${issue.keys.map((k) => `'${k}'`).join(', ')}`
            : issue.message,
      })),
    );
  }
  const settings = parsed.data;
  const fields: { field: string; message: string }[] = [];
  if ((settings.eab_kid === undefined) !== (settings.eab_hmac_key === undefined)) {
    fields.push({
      field: 'config.eab_hmac_key',
      message: 'eab_kid and eab_hmac_key are given together or not at all',
    });
  }
  if (settings.challenge_type === 'dns-01' && !settings.dns_provider) {
    fields.push({ field: 'config.dns_provider', message: 'is required with challenge_type dns-01' });
  }
  if (settings.ca_bundle_pem !== undefined) {
    try {
      if (pemDecodeCertificates(settings.ca_bundle_pem).length === 0) throw new Error('empty');
    } catch {
      fields.push({ field: 'config.ca_bundle_pem', message: 'must hold one or more PEM certificates' });
    }
  }
  if (fields.length > 0) throw invalid(fields);
  return settings;
}

/** The settings part of a stored config (managed state and the service's CRL number left out). */
export function readAcmeSettings(config: Record<string, unknown>): AcmeIssuerSettings {
  const settings = Object.fromEntries(
    Object.entries(config).filter(([key]) => !ACME_MANAGED_CONFIG_KEYS.includes(key) && key !== 'crl_number'),
  );
  return validateAcmeSettings(settings);
}
