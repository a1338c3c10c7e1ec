import type { CertificateVersion, ManagedCertificate } from '../domain/certificate.js';
import type { PolicyRuleType } from '../domain/policy.js';
import type { RenewalPolicy } from '../domain/renewal-policy.js';
import type { RuleConfigOf } from './config.js';

/** Everything a rule may look at. Evaluators are pure: no I/O, no clock. */
export interface EvaluationSubject {
  certificate: ManagedCertificate;
  /** Latest version, or null before the first issuance. */
  version: CertificateVersion | null;
  /** The certificate's renewal policy, or null when it could not be loaded. */
  renewalPolicy: RenewalPolicy | null;
}

export type RuleOutcome =
  | { result: 'pass' }
  | { result: 'violation'; message: string }
  /** The rule cannot judge this certificate (e.g. no version yet); logged, not a violation. */
  | { result: 'skip'; reason: string };

const PASS: RuleOutcome = { result: 'pass' };
const DAY_MS = 86_400_000;

type Evaluator<T extends PolicyRuleType> = (
  subject: EvaluationSubject,
  config: Required<RuleConfigOf<T>>,
) => RuleOutcome;

/** AllowedIssuers: the certificate's issuer_id is one of `allowed_issuer_ids` (exact id match). */
export const allowedIssuers: Evaluator<'AllowedIssuers'> = ({ certificate }, config) =>
  config.allowed_issuer_ids.includes(certificate.issuer_id)
    ? PASS
    : { result: 'violation', message: `issuer '${certificate.issuer_id}' is not an allowed issuer` };

/**
 * Lower-cases and drops one trailing dot, so `Example.COM.` and `example.com` are the same name.
 */
function canonicalName(name: string): string {
  const lower = name.trim().toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/**
 * One allowed-domain pattern against one name:
 * - `example.com` matches exactly `example.com`;
 * - `*.example.com` matches exactly one more label: `a.example.com`, but neither
 *   `example.com` nor `a.b.example.com` (the RFC 6125 rule browsers apply to wildcard
 *   certificates). A certificate name that is itself `*.example.com` matches only a
 *   pattern that is literally `*.example.com`: a wildcard pattern allows every single host
 *   under it, so it allows the wildcard certificate too; a plain `example.com` does not.
 * Comparison is case-insensitive and ignores one trailing dot.
 */
export function domainMatches(pattern: string, name: string): boolean {
  const p = canonicalName(pattern);
  const n = canonicalName(name);
  if (!p.startsWith('*.')) return p === n;
  const suffix = p.slice(1); // ".example.com"
  if (n === p) return true;
  if (!n.endsWith(suffix)) return false;
  const label = n.slice(0, n.length - suffix.length);
  return label.length > 0 && !label.includes('.') && label !== '*';
}

/**
 * AllowedDomains: every name the certificate carries — its common_name and each SAN — matches at
 * least one pattern of `allowed_domains`. The message lists the names that matched none.
 */
export const allowedDomains: Evaluator<'AllowedDomains'> = ({ certificate }, config) => {
  const names = [certificate.common_name, ...certificate.sans];
  const outside = [...new Set(names.filter((n) => !config.allowed_domains.some((p) => domainMatches(p, n))))];
  return outside.length === 0
    ? PASS
    : { result: 'violation', message: `names outside the allowed domains: ${outside.join(', ')}` };
};

/**
 * RequiredMetadata: every key of `required_keys` is present in the certificate's metadata with a
 * value that is not empty or whitespace. Keys compare exactly (case-sensitive).
 */
export const requiredMetadata: Evaluator<'RequiredMetadata'> = ({ certificate }, config) => {
  const missing = config.required_keys.filter((key) => {
    const value = Object.hasOwn(certificate.metadata, key) ? certificate.metadata[key] : undefined;
    return value === undefined || value.trim() === '';
  });
  return missing.length === 0
    ? PASS
    : { result: 'violation', message: `missing metadata keys: ${missing.join(', ')}` };
};

/**
 * AllowedEnvironments: the certificate's environment — its `environment` field, or the
 * `environment` metadata key when the field is null — is one of `allowed` (exact,
 * case-sensitive). A certificate without any environment violates the rule.
 */
export const allowedEnvironments: Evaluator<'AllowedEnvironments'> = ({ certificate }, config) => {
  const fromMetadata = Object.hasOwn(certificate.metadata, 'environment')
    ? certificate.metadata.environment
    : undefined;
  const environment = certificate.environment ?? fromMetadata ?? null;
  if (environment === null || environment === '') {
    return { result: 'violation', message: 'certificate has no environment' };
  }
  return config.allowed.includes(environment)
    ? PASS
    : { result: 'violation', message: `environment '${environment}' is not allowed` };
};

/**
 * RenewalLeadTime: renewal must start at least `lead_time_days` before expiry, i.e. the
 * certificate's renewal policy has renewal_window_days ≥ lead_time_days.
 */
export const renewalLeadTime: Evaluator<'RenewalLeadTime'> = ({ certificate, renewalPolicy }, config) => {
  if (!renewalPolicy)
    return { result: 'skip', reason: `renewal policy '${certificate.renewal_policy_id}' not found` };
  return renewalPolicy.renewal_window_days >= config.lead_time_days
    ? PASS
    : {
        result: 'violation',
        message: `renewal window of ${renewalPolicy.renewal_window_days} days is shorter than the required lead time of ${config.lead_time_days} days`,
      };
};

/**
 * CertificateLifetime: the latest version's validity (not_after − not_before) is at most
 * `max_days` days. Needs version data: skipped (and logged by the engine) without it.
 */
export const certificateLifetime: Evaluator<'CertificateLifetime'> = ({ version }, config) => {
  if (!version) return { result: 'skip', reason: 'certificate has no version yet' };
  const days = (version.not_after.getTime() - version.not_before.getTime()) / DAY_MS;
  return days <= config.max_days
    ? PASS
    : {
        result: 'violation',
        message: `validity of ${Math.ceil(days)} days exceeds the maximum of ${config.max_days} days`,
      };
};

export const EVALUATORS: { [T in PolicyRuleType]: Evaluator<T> } = {
  AllowedIssuers: allowedIssuers,
  AllowedDomains: allowedDomains,
  RequiredMetadata: requiredMetadata,
  AllowedEnvironments: allowedEnvironments,
  RenewalLeadTime: renewalLeadTime,
  CertificateLifetime: certificateLifetime,
};
