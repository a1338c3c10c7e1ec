import { z } from 'zod';

/**
 * Id prefixes. Ids are opaque strings; the prefix only tells a reader (and a
 * log line) what kind of record an id names.
 */
export const ID_PREFIX = {
  certificate: 'mc-',
  version: 'cv-',
  issuer: 'iss-',
  owner: 'own-',
  team: 'team-',
  profile: 'prof-',
  policyRule: 'pr-',
  violation: 'pv-',
  renewalPolicy: 'rp-',
  agent: 'ag-',
  target: 'tg-',
  job: 'job-',
  notification: 'ntf-',
  audit: 'ae-',
  webhook: 'wh-',
  acmeAccount: 'acct-',
  acmeOrder: 'ord-',
  acmeAuthorization: 'authz-',
  acmeChallenge: 'chall-',
  acmeEabKey: 'eab-',
  scepProbe: 'scepp-',
  scanTarget: 'nst-',
  discoveryScan: 'scan-',
  discoveredCertificate: 'dc-',
  healthCheck: 'hc-',
  healthCheckResult: 'hcr-',
  user: 'usr-',
  session: 'ses-',
  oidcGroupMapping: 'ogm-',
  oidcProvider: 'oidc-',
} as const;

export type IdKind = keyof typeof ID_PREFIX;

/** A fresh random id with the kind's prefix (UUID v4 body, 122 random bits). */
export function newId(kind: IdKind): string {
  return `${ID_PREFIX[kind]}${globalThis.crypto.randomUUID()}`;
}

/**
 * Lower-case ASCII slug used for `rp-<slug>` ids: runs of anything but [a-z0-9] become one
 * hyphen, trimmed at both ends, at most 64 characters.
 */
export function slugify(name: string): string {
  return name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/g, '');
}

/** Record ids: 1–128 printable characters without whitespace or slashes (they go in URLs). */
export const idSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9._:-]+$/, 'must contain only letters, digits, ".", "_", ":" and "-"');

/** Timestamps are Date in TypeScript; JSON carries RFC 3339 (Date#toJSON gives UTC). */
export const timestampSchema = z.date();

/** A flat string → string map (certificate metadata, labels). */
export const stringMapSchema = z.record(z.string(), z.string());

/** Paging request of every list query; `page` starts at 1. */
export interface PageRequest {
  page?: number;
  perPage?: number;
}

/** What every paged repository query returns: one page plus the count of all matches. */
export interface PageResult<T> {
  items: T[];
  total: number;
}

export const DEFAULT_PER_PAGE = 50;
export const MAX_PER_PAGE = 500;

export type SortDirection = 'asc' | 'desc';
