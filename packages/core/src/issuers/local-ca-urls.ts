import { z } from 'zod';

/**
 * Where a Local issuer's certificates point relying parties (docs/pki.md, "Where certificates
 * point"): the CRL distribution points (RFC 5280 §4.2.1.13), the OCSP responders and the
 * CA-issuers locations of the Authority Information Access extension (RFC 5280 §4.2.2.1).
 * Each is a list in the issuer's config; an absent list means the service's own URL under the
 * public base URL. Plain `http://` is allowed on purpose: many relying parties (Windows
 * CryptoAPI, embedded TLS stacks) fetch CRLs and AIA only over HTTP, through a CDN or web
 * server the operator puts in front of these routes; CRLs and OCSP answers are signed, so the
 * transport adds no integrity.
 */

/** Bounds keep every certificate small: each URL is copied into every certificate issued. */
export const MAX_POINTER_URLS = 8;
export const MAX_POINTER_URL_LENGTH = 512;

/** GeneralName URIs are IA5String (RFC 5280 §4.2.1.6): printable ASCII, no spaces. */
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;

function urlProblem(value: string): string | undefined {
  if (!PRINTABLE_ASCII.test(value)) return 'must be printable ASCII without spaces';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute http:// or https:// URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http:// or https:// URL';
  if (url.username || url.password) return 'must not carry credentials';
  if (url.hash) return 'must not carry a fragment';
  return undefined;
}

const pointerUrl = z
  .string()
  .max(MAX_POINTER_URL_LENGTH)
  .superRefine((value, ctx) => {
    const problem = urlProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

export const pointerList = z.array(pointerUrl).min(1).max(MAX_POINTER_URLS);

export const pointerConfigShape = {
  crl_distribution_urls: pointerList.optional(),
  ocsp_urls: pointerList.optional(),
  ca_issuers_urls: pointerList.optional(),
};

export interface PointerConfig {
  crl_distribution_urls?: string[] | undefined;
  ocsp_urls?: string[] | undefined;
  ca_issuers_urls?: string[] | undefined;
}

/** What the issued certificate carries; an empty list writes no extension entry. */
export interface CertificatePointers {
  crlDistributionPoints: string[];
  /** freshestCRL (RFC 5280 §4.2.1.15): empty unless the issuer publishes delta CRLs. */
  freshestCrl: string[];
  ocsp: string[];
  caIssuers: string[];
}

/** The service's own routes for an issuer under `base` (no trailing slash). */
export const serviceUrls = (base: string, issuerId: string) => ({
  crl: `${base}/.well-known/pki/crl/${issuerId}`,
  deltaCrl: `${base}/.well-known/pki/crl/${issuerId}/delta`,
  ocsp: `${base}/.well-known/pki/ocsp/${issuerId}`,
  caIssuers: `${base}/.well-known/pki/ca/${issuerId}`,
});

/**
 * The configured lists, each falling back to the service's URL when a public base URL is
 * known, and to nothing otherwise.
 */
export function certificatePointers(
  config: PointerConfig & { delta_crl?: { enabled: boolean; urls?: string[] | undefined } | undefined },
  base: string | undefined,
  issuerId: string,
): CertificatePointers {
  const own = base ? serviceUrls(base, issuerId) : undefined;
  const delta = config.delta_crl?.enabled ? config.delta_crl : undefined;
  return {
    crlDistributionPoints: config.crl_distribution_urls ?? (own ? [own.crl] : []),
    freshestCrl: delta ? (delta.urls ?? (own ? [own.deltaCrl] : [])) : [],
    ocsp: config.ocsp_urls ?? (own ? [own.ocsp] : []),
    caIssuers: config.ca_issuers_urls ?? (own ? [own.caIssuers] : []),
  };
}
