import { decodeBase64Url, JWS_SIGNATURE_ALGORITHMS, type JwsSignatureAlgorithm } from '@certwright/core/pki';
import { mdmFailure } from './status.js';

/**
 * The device-management challenge as bytes on the wire: a JWS in the compact serialization
 * (RFC 7515 §7.1) carrying JWT claims (RFC 7519) in the CSR's challengePassword. This reader
 * is the only code that sees the untrusted text before the verifier: every part has a size
 * cap, base64url is strict (alphabet, length, canonical spelling), JSON nesting is bounded
 * before `JSON.parse` runs, and each header member and claim is type-checked. Its failures
 * are typed errors whose `extra.mdm_status` is `malformed` or `unknown_version`; nothing else
 * escapes. docs/protocols/scep-mdm.md defines the format.
 */

/** The JWS algorithms accepted: the same as on every JWS certwright verifies (`pki/jws-signature.ts`). */
export const MDM_CHALLENGE_ALGORITHMS = JWS_SIGNATURE_ALGORITHMS;
export type MdmChallengeAlgorithm = JwsSignatureAlgorithm;

/** The only claims version this reader knows. */
export const MDM_CHALLENGE_VERSION = 1;

/** The `typ` values accepted (compared case-insensitively, RFC 7515 §4.1.9); `typ` may be absent. */
export const MDM_CHALLENGE_TYPES = ['scep-challenge+jwt', 'jwt'] as const;

export interface MdmTokenLimits {
  /** Characters of the whole compact JWS. */
  maxChars: number;
  /** Octets of the decoded protected header. */
  maxHeaderBytes: number;
  /** Octets of the decoded payload. */
  maxPayloadBytes: number;
  /** Octets of the decoded signature (an RSA-4096 signature is 512). */
  maxSignatureBytes: number;
  /** Nesting of JSON arrays and objects (the claims need 2). */
  maxJsonDepth: number;
  /** Entries in one name list (`dns`, `ip`, `email`, `uri`) and in `aud`. */
  maxNames: number;
}

export const DEFAULT_MDM_TOKEN_LIMITS: Readonly<MdmTokenLimits> = Object.freeze({
  maxChars: 8192,
  maxHeaderBytes: 1024,
  maxPayloadBytes: 6144,
  maxSignatureBytes: 512,
  maxJsonDepth: 4,
  maxNames: 100,
});

export interface MdmChallengeHeader {
  alg: MdmChallengeAlgorithm;
  /** SHA-256 of the DER signing certificate (RFC 7515 §4.1.8): which trust anchor signed. */
  x5tS256: Buffer;
  typ?: string;
  kid?: string;
}

/** The names a challenge authorizes; the CSR must carry exactly these. */
export interface MdmChallengeNames {
  cn: string | null;
  dns: string[];
  ip: string[];
  email: string[];
  uri: string[];
}

export interface MdmChallengeClaims extends MdmChallengeNames {
  ver: 1;
  iss: string;
  aud: string[];
  /** NumericDate seconds. */
  iat: number;
  nbf: number | null;
  exp: number;
  jti: string;
  sub: string | null;
  /** Absent in the token: null. */
  compliant: boolean | null;
}

export interface ParsedMdmChallenge {
  header: MdmChallengeHeader;
  claims: MdmChallengeClaims;
  /** `BASE64URL(header) || '.' || BASE64URL(payload)`: what the signature covers. */
  signingInput: Buffer;
  signature: Buffer;
}

const malformed = (message: string) => mdmFailure('malformed', `malformed challenge: ${message}`);
const UTF8 = new TextDecoder('utf-8', { fatal: true });
const COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const HEADER_MEMBERS = new Set(['alg', 'typ', 'kid', 'x5t#S256']);
/** NumericDate bounds: 1970 to year 9999, whole seconds. */
const MAX_NUMERIC_DATE = 253_402_300_799;

/** Reads a compact JWS challenge; see the module comment. */
export function parseMdmChallenge(
  token: string,
  limits: MdmTokenLimits = DEFAULT_MDM_TOKEN_LIMITS,
): ParsedMdmChallenge {
  if (typeof token !== 'string') throw malformed('the challenge must be text');
  if (token.length > limits.maxChars) throw malformed(`longer than ${limits.maxChars} characters`);
  if (!COMPACT.test(token)) {
    throw malformed('not a compact JWS (three base64url parts separated by dots)');
  }
  const [headerText, payloadText, signatureText] = token.split('.') as [string, string, string];
  const header = readHeader(
    jsonObject(
      decode(headerText, 'the protected header', limits.maxHeaderBytes),
      'the protected header',
      limits,
    ),
  );
  const payload = jsonObject(
    decode(payloadText, 'the payload', limits.maxPayloadBytes),
    'the payload',
    limits,
  );
  // The version decides how everything else is read, so it is checked first.
  if (payload.ver !== MDM_CHALLENGE_VERSION) {
    const shown = JSON.stringify(payload.ver ?? null).slice(0, 32);
    throw mdmFailure('unknown_version', `unknown challenge version ${shown}; this server reads version 1`);
  }
  const claims = readClaims(payload, limits);
  const signature = decode(signatureText, 'the signature', limits.maxSignatureBytes);
  if (signature.length === 0) throw malformed('the signature is empty');
  return {
    header,
    claims,
    signingInput: Buffer.from(`${headerText}.${payloadText}`, 'ascii'),
    signature,
  };
}

function decode(text: string, what: string, maxBytes: number): Buffer {
  try {
    return decodeBase64Url(text, what, maxBytes);
  } catch (cause) {
    throw mdmFailure('malformed', `malformed challenge: ${(cause as Error).message}`, cause);
  }
}

/**
 * The deepest nesting of arrays and objects in a JSON text, scanning no further than `max + 1`
 * levels; strings (and escaped quotes in them) are skipped. Runs before `JSON.parse` so that a
 * deeply nested payload costs one linear pass and no recursion.
 */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

function jsonObject(bytes: Uint8Array, what: string, limits: MdmTokenLimits): Record<string, unknown> {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw malformed(`${what} is not UTF-8`);
  }
  if (jsonDepthExceeds(text, limits.maxJsonDepth)) {
    throw malformed(`${what} nests JSON deeper than ${limits.maxJsonDepth} levels`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw malformed(`${what} is not JSON`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw malformed(`${what} must be a JSON object`);
  }
  return value as Record<string, unknown>;
}

function text(value: unknown, name: string, min: number, max: number): string {
  if (typeof value !== 'string') throw malformed(`'${name}' must be a string`);
  if (value.length < min || value.length > max) {
    throw malformed(`'${name}' must be ${min} to ${max} characters long`);
  }
  // Control characters have no place in any of these values and would confuse logs.
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) throw malformed(`'${name}' contains a control character`);
  }
  return value;
}

function readHeader(raw: Record<string, unknown>): MdmChallengeHeader {
  for (const name of Object.keys(raw)) {
    if (!HEADER_MEMBERS.has(name)) {
      // Keys carried in the token (jwk, x5c, jku, x5u) are never trusted, and no extension is understood (crit).
      throw malformed(`the header member '${name.slice(0, 32)}' is not accepted`);
    }
  }
  const alg = text(raw.alg, 'alg', 1, 16);
  if (!(MDM_CHALLENGE_ALGORITHMS as readonly string[]).includes(alg)) {
    throw malformed(`the algorithm '${alg}' is not accepted (${MDM_CHALLENGE_ALGORITHMS.join(', ')})`);
  }
  const header: MdmChallengeHeader = {
    alg: alg as MdmChallengeAlgorithm,
    x5tS256: decode(text(raw['x5t#S256'], 'x5t#S256', 1, 64), "the header member 'x5t#S256'", 32),
  };
  if (header.x5tS256.length !== 32) throw malformed("'x5t#S256' must be a SHA-256 thumbprint (32 octets)");
  if (raw.typ !== undefined) {
    const typ = text(raw.typ, 'typ', 1, 64);
    if (!(MDM_CHALLENGE_TYPES as readonly string[]).includes(typ.toLowerCase())) {
      throw malformed(`the type '${typ}' is not accepted (${MDM_CHALLENGE_TYPES.join(', ')})`);
    }
    header.typ = typ;
  }
  if (raw.kid !== undefined) header.kid = text(raw.kid, 'kid', 1, 256);
  return header;
}

function numericDate(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_NUMERIC_DATE) {
    throw malformed(`'${name}' must be a NumericDate in whole seconds`);
  }
  return value;
}

function list(value: unknown, name: string, maxLength: number, limits: MdmTokenLimits): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw malformed(`'${name}' must be an array of strings`);
  if (value.length > limits.maxNames) throw malformed(`'${name}' has more than ${limits.maxNames} entries`);
  return value.map((entry, i) => text(entry, `${name}[${i}]`, 1, maxLength));
}

function readClaims(raw: Record<string, unknown>, limits: MdmTokenLimits): MdmChallengeClaims {
  const aud =
    typeof raw.aud === 'string' ? [text(raw.aud, 'aud', 1, 512)] : list(raw.aud, 'aud', 512, limits);
  if (aud.length === 0) throw malformed("'aud' must name at least one audience");
  const iat = numericDate(raw.iat, 'iat');
  const exp = numericDate(raw.exp, 'exp');
  const nbf = raw.nbf === undefined ? null : numericDate(raw.nbf, 'nbf');
  if (exp <= iat) throw malformed("'exp' must be later than 'iat'");
  if (nbf !== null && nbf >= exp) throw malformed("'nbf' must be earlier than 'exp'");
  if (raw.compliant !== undefined && typeof raw.compliant !== 'boolean') {
    throw malformed("'compliant' must be true or false");
  }
  const jti = text(raw.jti, 'jti', 8, 128);
  if (!/^[\x21-\x7e]+$/.test(jti)) throw malformed("'jti' must be printable ASCII without spaces");
  const claims: MdmChallengeClaims = {
    ver: 1,
    iss: text(raw.iss, 'iss', 1, 256),
    aud,
    iat,
    nbf,
    exp,
    jti,
    sub: raw.sub === undefined ? null : text(raw.sub, 'sub', 1, 256),
    compliant: raw.compliant === undefined ? null : (raw.compliant as boolean),
    // RFC 5280 upper bound of a common name: 64 characters.
    cn: raw.cn === undefined ? null : text(raw.cn, 'cn', 1, 64),
    dns: list(raw.dns, 'dns', 253, limits),
    ip: list(raw.ip, 'ip', 45, limits),
    email: list(raw.email, 'email', 254, limits),
    uri: list(raw.uri, 'uri', 2048, limits),
  };
  if (
    claims.cn === null &&
    claims.dns.length + claims.ip.length + claims.email.length + claims.uri.length === 0
  ) {
    throw malformed('the challenge names nothing (no cn, dns, ip, email or uri)');
  }
  return claims;
}
