import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import type { PublicJwk } from '../domain/acme.js';
import { fail, isCertwrightError } from '../errors.js';
import { algorithmIdentifier, bitString, integer, NULL, oid, sequence } from './der.js';
import { checkSubjectPublicKeyInfo, type PublicKeyDescription } from './key-check.js';
import { OID } from './oids.js';

/**
 * Public JSON Web Keys (RFC 7517, RFC 7518 §6, RFC 8037) from untrusted JSON: ACME account
 * keys. A JWK is read member by member with fixed bounds, turned into a SubjectPublicKeyInfo
 * with our own DER writer, and passed through `checkSubjectPublicKeyInfo` before
 * node:crypto sees a byte of it. Failures are `malformed` (not a JWK) or `key_rejected` (a
 * JWK of a key certwright does not accept); nothing else escapes.
 */

export interface ParsedPublicJwk {
  /** The members that define the key (RFC 7638 §3.2), exactly as sent; nothing else. */
  jwk: PublicJwk;
  /** RFC 7638 SHA-256 thumbprint, base64url without padding. */
  thumbprint: string;
  /** The DER SubjectPublicKeyInfo of the key. */
  spki: Uint8Array;
  description: PublicKeyDescription;
  key: KeyObject;
}

/** Members that only a private or symmetric key has: a public JWK carrying one is refused. */
const PRIVATE_MEMBERS = new Set(['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']);
/** Members RFC 7517 §4 defines besides the key material; accepted and ignored. */
const OPTIONAL_MEMBERS = new Set(['use', 'key_ops', 'alg', 'kid', 'x5u', 'x5c', 'x5t', 'x5t#S256', 'ext']);
const MAX_MEMBERS = 16;

const CURVES = {
  'P-256': { oid: '1.2.840.10045.3.1.7', size: 32 },
  'P-384': { oid: '1.3.132.0.34', size: 48 },
  'P-521': { oid: '1.3.132.0.35', size: 66 },
} as const;

/** 16384-bit RSA: the key check's ceiling, 2048 octets of modulus. */
const MAX_RSA_MODULUS_OCTETS = 2048;
/** The key check bounds the exponent at 256 bits. */
const MAX_RSA_EXPONENT_OCTETS = 32;

const B64URL = /^[A-Za-z0-9_-]*$/;

/**
 * Strict base64url without padding (RFC 7515 §2): only the alphabet, no length that cannot
 * occur, and only the canonical spelling (unused low bits zero), so one key has one text.
 */
export function decodeBase64Url(text: string, field: string, maxBytes: number): Buffer {
  if (text.length > Math.ceil((maxBytes * 4) / 3)) {
    throw fail('malformed', `${field} is longer than ${maxBytes} octets`);
  }
  if (!B64URL.test(text) || text.length % 4 === 1) {
    throw fail('malformed', `${field} is not base64url without padding`);
  }
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.toString('base64url') !== text) throw fail('malformed', `${field} is not canonical base64url`);
  return bytes;
}

function member(jwk: Record<string, unknown>, name: string): string {
  const value = jwk[name];
  if (typeof value !== 'string') throw fail('malformed', `the JWK member '${name}' must be a string`);
  return value;
}

/** Reads a JWK object; see the module comment for what is checked. */
export function parsePublicJwk(value: unknown): ParsedPublicJwk {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw fail('malformed', 'the JWK must be a JSON object');
  }
  const input = value as Record<string, unknown>;
  const names = Object.keys(input);
  if (names.length > MAX_MEMBERS) throw fail('malformed', `a JWK has at most ${MAX_MEMBERS} members`);
  for (const name of names) {
    if (PRIVATE_MEMBERS.has(name)) throw fail('malformed', `the JWK holds private key material ('${name}')`);
  }
  const kty = member(input, 'kty');
  let jwk: PublicJwk;
  let spki: Uint8Array;
  if (kty === 'RSA') {
    jwk = { kty, n: member(input, 'n'), e: member(input, 'e') };
    const n = decodeBase64Url(jwk.n!, 'JWK n', MAX_RSA_MODULUS_OCTETS);
    const e = decodeBase64Url(jwk.e!, 'JWK e', MAX_RSA_EXPONENT_OCTETS);
    // RFC 7518 §6.3.1: minimal octets, so that one key has one thumbprint.
    if (n.length === 0 || e.length === 0 || n[0] === 0 || e[0] === 0) {
      throw fail('malformed', 'the RSA modulus and exponent must be non-empty without leading zero octets');
    }
    spki = sequence(
      algorithmIdentifier(OID.rsaEncryption, NULL),
      bitString(sequence(integer(n), integer(e))),
    );
  } else if (kty === 'EC') {
    const crv = member(input, 'crv');
    const curve = CURVES[crv as keyof typeof CURVES];
    if (!curve)
      throw fail('key_rejected', `public key refused: the curve '${crv.slice(0, 32)}' is not supported`);
    jwk = { kty, crv, x: member(input, 'x'), y: member(input, 'y') };
    const x = decodeBase64Url(jwk.x!, 'JWK x', curve.size);
    const y = decodeBase64Url(jwk.y!, 'JWK y', curve.size);
    // RFC 7518 §6.2.1.2: the coordinates are full-length octet strings.
    if (x.length !== curve.size || y.length !== curve.size) {
      throw fail('malformed', `${crv} coordinates must be ${curve.size} octets each`);
    }
    spki = sequence(
      algorithmIdentifier(OID.idEcPublicKey, oid(curve.oid)),
      bitString(Buffer.concat([Buffer.from([4]), x, y])),
    );
  } else if (kty === 'OKP') {
    const crv = member(input, 'crv');
    if (crv !== 'Ed25519') {
      throw fail('key_rejected', `public key refused: the curve '${crv.slice(0, 32)}' is not supported`);
    }
    jwk = { kty, crv, x: member(input, 'x') };
    const x = decodeBase64Url(jwk.x!, 'JWK x', 32);
    if (x.length !== 32) throw fail('malformed', 'an Ed25519 key is 32 octets');
    spki = sequence(algorithmIdentifier(OID.idEd25519), bitString(x));
  } else {
    throw fail('key_rejected', `public key refused: the key type '${kty.slice(0, 32)}' is not supported`);
  }
  for (const name of names) {
    if (!(name in jwk) && !OPTIONAL_MEMBERS.has(name)) {
      throw fail('malformed', `the JWK member '${name.slice(0, 64)}' is not defined for ${kty} keys`);
    }
  }
  const description = checkSubjectPublicKeyInfo(spki);
  let key: KeyObject;
  try {
    key = createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' });
  } catch (cause) {
    throw fail('key_rejected', 'public key refused: the key is not usable', { cause });
  }
  return { jwk, thumbprint: jwkThumbprint(jwk), spki, description, key };
}

/** The RFC 7638 members of each key type, in the lexicographic order the thumbprint uses. */
const THUMBPRINT_MEMBERS: Record<string, readonly string[]> = {
  RSA: ['e', 'kty', 'n'],
  EC: ['crv', 'kty', 'x', 'y'],
  OKP: ['crv', 'kty', 'x'],
};

/** RFC 7638 SHA-256 thumbprint of a public JWK, base64url without padding. */
export function jwkThumbprint(jwk: PublicJwk): string {
  const members = THUMBPRINT_MEMBERS[jwk.kty ?? ''];
  if (!members) throw fail('key_rejected', 'public key refused: unsupported key type');
  const canonical = `{${members.map((m) => `${JSON.stringify(m)}:${JSON.stringify(jwk[m] ?? '')}`).join(',')}}`;
  return createHash('sha256').update(canonical, 'utf8').digest('base64url');
}

/**
 * The public JWK of a SubjectPublicKeyInfo (a certificate's key), for comparing thumbprints:
 * ACME revocation signed with the certificate's key (RFC 8555 §7.6).
 */
export function spkiToPublicJwk(spki: Uint8Array): PublicJwk {
  checkSubjectPublicKeyInfo(spki);
  try {
    const exported = createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' }).export({
      format: 'jwk',
    }) as Record<string, unknown>;
    const members = THUMBPRINT_MEMBERS[String(exported.kty)];
    if (!members) throw fail('key_rejected', 'public key refused: unsupported key type');
    return Object.fromEntries(members.map((m) => [m, String(exported[m])]));
  } catch (cause) {
    if (isCertwrightError(cause)) throw cause;
    throw fail('key_rejected', 'public key refused: the key is not usable', { cause });
  }
}
