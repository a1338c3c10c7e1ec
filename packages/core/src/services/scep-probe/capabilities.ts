/*
 * GetCACaps (RFC 8894 §3.5.2): plain text, one keyword per line, compared case-insensitively.
 * SCEPStandard promises AES, POSTPKIOperation and SHA-256 (§3.5.2), so it sets those flags
 * even when a server does not repeat them.
 */

/** Keywords kept from one answer; a real server sends about ten. */
export const MAX_CAPABILITIES = 64;
/** Longest keyword kept; the registered ones are at most 16 characters. */
export const MAX_CAPABILITY_LENGTH = 128;

export interface CapabilityFlags {
  supports_rfc8894: boolean;
  supports_aes: boolean;
  supports_post: boolean;
  supports_renewal: boolean;
  supports_sha256: boolean;
  supports_sha512: boolean;
}

export const NO_CAPABILITIES: Readonly<CapabilityFlags> = Object.freeze({
  supports_rfc8894: false,
  supports_aes: false,
  supports_post: false,
  supports_renewal: false,
  supports_sha256: false,
  supports_sha512: false,
});

/**
 * The keywords of a GetCACaps body as the server wrote them: lines trimmed, empty lines and
 * lines that are not one keyword (letters, digits, '.', '_', '-': so an HTML error page or binary yields nothing) dropped, duplicates kept once.
 */
export function parseCapabilities(body: Uint8Array): string[] {
  const text = Buffer.from(body).toString('latin1');
  const seen = new Set<string>();
  const out: string[] = [];
  for (const line of text.split(/\r?\n|\r/)) {
    if (out.length === MAX_CAPABILITIES) break;
    const keyword = line.trim();
    if (
      keyword === '' ||
      keyword.length > MAX_CAPABILITY_LENGTH ||
      !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(keyword)
    )
      continue;
    const folded = keyword.toLowerCase();
    if (seen.has(folded)) continue;
    seen.add(folded);
    out.push(keyword);
  }
  return out;
}

export function capabilityFlags(capabilities: readonly string[]): CapabilityFlags {
  const has = new Set(capabilities.map((c) => c.toLowerCase()));
  const standard = has.has('scepstandard');
  return {
    supports_rfc8894: standard,
    supports_aes: standard || has.has('aes'),
    supports_post: standard || has.has('postpkioperation'),
    supports_renewal: has.has('renewal'),
    supports_sha256: standard || has.has('sha-256'),
    supports_sha512: has.has('sha-512'),
  };
}
