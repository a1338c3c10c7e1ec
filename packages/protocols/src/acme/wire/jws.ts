import type { KeyObject } from 'node:crypto';
import { fail, type PublicJwk } from '@certwright/core';
import {
  decodeBase64Url,
  JWS_SIGNATURE_ALGORITHMS,
  type JwsSignatureAlgorithm,
  jwsAlgorithmFitsKey,
  type ParsedPublicJwk,
  type PublicKeyDescription,
  parsePublicJwk,
  verifyJwsSignature,
} from '@certwright/core/pki';
import { acmeProblem } from './problem.js';

/**
 * ACME request bodies: JWS in the flattened JSON serialization (RFC 7515 §7.2.2) as RFC 8555
 * §6.2 restricts it. Parsed here with fixed bounds before any library sees a byte; only the
 * signature check itself goes to `node:crypto`, with the algorithm pinned and a key that passed
 * `parsePublicJwk` (our JWK reader and key check).
 *
 * Failures are typed: `malformed`, `too_large`, `signature_algorithm_not_allowed`
 * (badSignatureAlgorithm, with the accepted `algorithms`), `key_rejected`,
 * `signature_invalid`. Nothing else escapes.
 */

/** Signature algorithms accepted on requests (RFC 8555 §6.2: never `none`, never a MAC). */
export const ACME_JWS_ALGORITHMS = JWS_SIGNATURE_ALGORITHMS;
export type AcmeJwsAlgorithm = JwsSignatureAlgorithm;
/** MAC algorithms of an external account binding (RFC 8555 §7.3.4). */
export const EAB_ALGORITHMS = ['HS256', 'HS384', 'HS512'] as const;
export type EabAlgorithm = (typeof EAB_ALGORITHMS)[number];

export interface JwsLimits {
  /** The whole JWS text; a CSR of a 16384-bit RSA key with many names fits in far less. */
  maxBytes: number;
  /** The decoded protected header. */
  maxProtectedBytes: number;
  /** The decoded signature (an RSA-16384 signature is 2048 octets). */
  maxSignatureBytes: number;
  /** Characters of `url`, `kid` and `nonce`. */
  maxUrlLength: number;
  maxNonceLength: number;
}

export const DEFAULT_JWS_LIMITS: Readonly<JwsLimits> = Object.freeze({
  maxBytes: 64 * 1024,
  maxProtectedBytes: 8 * 1024,
  maxSignatureBytes: 2048,
  maxUrlLength: 2048,
  maxNonceLength: 128,
});

/**
 * What a JWS is used for, which decides its header rules:
 * - `request`: an ACME request (alg from {@link ACME_JWS_ALGORITHMS}, nonce, url, jwk xor kid);
 * - `key-change`: the inner JWS of a key rollover (jwk, no kid, url; nonce optional, §7.3.5);
 * - `eab`: an external account binding (a MAC algorithm, kid, url; no jwk, no nonce, §7.3.4).
 */
export type JwsPurpose = 'request' | 'key-change' | 'eab';

export interface JwsHeader {
  alg: string;
  url: string;
  nonce?: string;
  kid?: string;
  /** The key as sent, checked (`parsePublicJwk`); present exactly when `kid` is absent, except for `eab`. */
  jwk?: ParsedPublicJwk;
}

export interface ParsedJws {
  header: JwsHeader;
  /** The three members as sent: what the signature covers. */
  protected: string;
  payload: string;
  signature: string;
  /** The decoded payload; empty for POST-as-GET. */
  payloadBytes: Uint8Array;
}

const HEADER_MEMBERS: Record<JwsPurpose, ReadonlySet<string>> = {
  request: new Set(['alg', 'nonce', 'url', 'jwk', 'kid']),
  'key-change': new Set(['alg', 'nonce', 'url', 'jwk']),
  eab: new Set(['alg', 'url', 'kid']),
};

const TOP_MEMBERS = ['protected', 'payload', 'signature'] as const;

const malformed = (message: string) => fail('malformed', message);
const UTF8 = new TextDecoder('utf-8', { fatal: true });

function parseJsonObject(bytes: Uint8Array, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(UTF8.decode(bytes));
  } catch {
    throw malformed(`${what} is not UTF-8 JSON`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw malformed(`${what} must be a JSON object`);
  }
  return value as Record<string, unknown>;
}

function boundedString(value: unknown, name: string, max: number): string {
  if (typeof value !== 'string' || value.length === 0)
    throw malformed(`the header member '${name}' must be a non-empty string`);
  if (value.length > max) throw malformed(`the header member '${name}' is longer than ${max} characters`);
  return value;
}

/** The JWS body of a request, from its bytes. */
export function parseJwsBody(
  body: Uint8Array,
  purpose: JwsPurpose = 'request',
  limits: JwsLimits = DEFAULT_JWS_LIMITS,
): ParsedJws {
  if (body.byteLength > limits.maxBytes)
    throw fail('too_large', `the JWS is larger than ${limits.maxBytes} bytes`);
  return parseJwsObject(parseJsonObject(body, 'the request body'), purpose, limits);
}

/**
 * A flattened JWS already parsed as JSON (the inner JWS of a key change, an external account
 * binding). Same rules as {@link parseJwsBody}.
 */
export function parseJwsObject(
  value: unknown,
  purpose: JwsPurpose,
  limits: JwsLimits = DEFAULT_JWS_LIMITS,
): ParsedJws {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw malformed('a JWS must be a JSON object');
  const jws = value as Record<string, unknown>;
  const names = Object.keys(jws);
  // RFC 8555 §6.2: no unprotected header, no multiple signatures; so exactly these three.
  if (names.length !== TOP_MEMBERS.length || !TOP_MEMBERS.every((m) => typeof jws[m] === 'string')) {
    throw malformed("a JWS must have exactly the string members 'protected', 'payload' and 'signature'");
  }
  const protectedText = jws.protected as string;
  const payloadText = jws.payload as string;
  const signatureText = jws.signature as string;
  if (protectedText.length + payloadText.length + signatureText.length > limits.maxBytes) {
    throw fail('too_large', `the JWS is larger than ${limits.maxBytes} bytes`);
  }
  const header = parseHeader(
    parseJsonObject(
      decodeBase64Url(protectedText, 'the protected header', limits.maxProtectedBytes),
      'the protected header',
    ),
    purpose,
    limits,
  );
  const payloadBytes = decodeBase64Url(payloadText, 'the payload', limits.maxBytes);
  const signature = decodeBase64Url(signatureText, 'the signature', limits.maxSignatureBytes);
  if (signature.length === 0) throw malformed('the signature is empty');
  return { header, protected: protectedText, payload: payloadText, signature: signatureText, payloadBytes };
}

function parseHeader(raw: Record<string, unknown>, purpose: JwsPurpose, limits: JwsLimits): JwsHeader {
  const allowed = HEADER_MEMBERS[purpose];
  for (const name of Object.keys(raw)) {
    if (!allowed.has(name))
      throw malformed(`the protected header member '${name.slice(0, 64)}' is not allowed here`);
  }
  const alg = boundedString(raw.alg, 'alg', 16);
  const accepted: readonly string[] = purpose === 'eab' ? EAB_ALGORITHMS : ACME_JWS_ALGORITHMS;
  if (!accepted.includes(alg)) {
    throw acmeProblem('badSignatureAlgorithm', `the JWS algorithm '${alg}' is not accepted`, {
      members: { algorithms: [...accepted] },
    });
  }
  const header: JwsHeader = { alg, url: boundedString(raw.url, 'url', limits.maxUrlLength) };
  if (raw.nonce !== undefined) {
    header.nonce = boundedString(raw.nonce, 'nonce', limits.maxNonceLength);
  } else if (purpose === 'request') {
    throw acmeProblem('badNonce', "the protected header has no 'nonce'");
  }
  const hasJwk = raw.jwk !== undefined;
  const hasKid = raw.kid !== undefined;
  if (purpose === 'eab') {
    header.kid = boundedString(raw.kid, 'kid', limits.maxUrlLength);
    return header;
  }
  if (purpose === 'key-change' && !hasJwk) throw malformed("the inner JWS of a key change must carry 'jwk'");
  if (hasJwk === hasKid) throw malformed("the protected header must carry exactly one of 'jwk' and 'kid'");
  if (hasKid) header.kid = boundedString(raw.kid, 'kid', limits.maxUrlLength);
  else header.jwk = parsePublicJwk(raw.jwk);
  return header;
}

/**
 * Verifies the signature of a parsed JWS with an account key. The algorithm must fit the key
 * (RS256 needs RSA ≥ 2048 bits, ES256 P-256 …): otherwise badSignatureAlgorithm.
 */
export async function verifyJws(
  jws: ParsedJws,
  key: { key: KeyObject; description: PublicKeyDescription },
): Promise<void> {
  const alg = jws.header.alg as AcmeJwsAlgorithm;
  if (!ACME_JWS_ALGORITHMS.includes(alg) || !jwsAlgorithmFitsKey(alg, key.description)) {
    throw acmeProblem(
      'badSignatureAlgorithm',
      `the algorithm '${jws.header.alg}' does not fit the account key`,
      {
        members: { algorithms: [...ACME_JWS_ALGORITHMS] },
      },
    );
  }
  const input = Buffer.from(`${jws.protected}.${jws.payload}`, 'ascii');
  const signature = Buffer.from(jws.signature, 'base64url');
  if (!verifyJwsSignature(alg, key.key, input, signature)) {
    throw fail('signature_invalid', 'the JWS signature does not verify');
  }
}

/** The payload as a JSON object; `undefined` for the empty payload of POST-as-GET. */
export function jwsPayloadObject(jws: ParsedJws): Record<string, unknown> | undefined {
  if (jws.payloadBytes.byteLength === 0) return undefined;
  return parseJsonObject(jws.payloadBytes, 'the JWS payload');
}

export type { PublicJwk };
