import { createHash, createPrivateKey, createPublicKey, type KeyObject, randomBytes } from 'node:crypto';
import { fail } from '@certwright/core';
import {
  defaultJwsAlgorithm,
  jwsAlgorithmFitsKey,
  pemDecode,
  readCertificate,
  signJws,
} from '@certwright/core/pki';
import { MDM_CHALLENGE_VERSION, type MdmChallengeAlgorithm, parseMdmChallenge } from './token.js';

/**
 * Makes a device-management challenge as an MDM would: for testing a profile end to end, and
 * for embedders whose own MDM logic runs next to certwright. The token follows
 * docs/protocols/scep-mdm.md and is read back with the verifier's parser before it is
 * returned, so what this mints always parses.
 */

export interface MintScepChallengeInput {
  /** The MDM signing key: a private KeyObject or PKCS#8 / SEC1 / PKCS#1 PEM. */
  key: KeyObject | string;
  /** The key's certificate (PEM or DER): the one in the profile's MDM trust file. */
  certificate: string | Uint8Array;
  /** The profile's audience (`mdm.audience`, or `urn:certwright:scep:<profile id>` when none is set). */
  audience: string | readonly string[];
  /** `iss`: who minted it; default `certwright-mint`. */
  issuer?: string;
  /** The names the CSR must carry (exactly these), compliance and an optional device id (`sub`). */
  claims: {
    cn?: string;
    dns?: readonly string[];
    ip?: readonly string[];
    email?: readonly string[];
    uri?: readonly string[];
    /** Omitted: the claim is left out (a profile requiring compliance then refuses it). */
    compliant?: boolean;
    sub?: string;
  };
  /** Seconds from `now` to `exp`; default 600. */
  lifetimeSeconds?: number;
  /** `iat` and `nbf`; default the current time. */
  now?: Date;
  /** `jti`; default 16 random bytes, base64url. */
  jti?: string;
  /** Default: RS256 for RSA, ES256/ES384 for P-256/P-384, EdDSA for Ed25519. */
  algorithm?: MdmChallengeAlgorithm;
  /** The header `typ`; default `scep-challenge+jwt`. */
  type?: string;
  kid?: string;
}

export function mintScepChallenge(input: MintScepChallengeInput): string {
  const der =
    typeof input.certificate === 'string'
      ? pemDecode(input.certificate, 'CERTIFICATE')
      : Buffer.from(input.certificate);
  const certificate = readCertificate(der);
  const privateKey =
    typeof input.key === 'string' ? createPrivateKey({ key: input.key, format: 'pem' }) : input.key;
  if (privateKey.type !== 'private') throw fail('invalid_input', 'the signing key must be a private key');
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  if (!spki.equals(Buffer.from(certificate.spki))) {
    throw fail('invalid_input', "the signing key is not the certificate's key");
  }
  const alg = input.algorithm ?? defaultJwsAlgorithm(certificate.publicKey);
  if (!alg || !jwsAlgorithmFitsKey(alg, certificate.publicKey)) {
    throw fail('invalid_input', `the algorithm ${alg ?? '(none)'} does not fit the certificate's key`);
  }
  const lifetime = input.lifetimeSeconds ?? 600;
  if (!Number.isInteger(lifetime) || lifetime < 1) {
    throw fail('invalid_input', 'lifetimeSeconds must be a positive whole number of seconds');
  }
  const iat = Math.floor((input.now ?? new Date()).getTime() / 1000);
  const header: Record<string, unknown> = {
    alg,
    typ: input.type ?? 'scep-challenge+jwt',
    'x5t#S256': createHash('sha256').update(der).digest('base64url'),
    ...(input.kid ? { kid: input.kid } : {}),
  };
  const { claims } = input;
  const payload: Record<string, unknown> = {
    ver: MDM_CHALLENGE_VERSION,
    iss: input.issuer ?? 'certwright-mint',
    aud: typeof input.audience === 'string' ? input.audience : [...input.audience],
    iat,
    nbf: iat,
    exp: iat + lifetime,
    jti: input.jti ?? randomBytes(16).toString('base64url'),
    ...(claims.sub !== undefined ? { sub: claims.sub } : {}),
    ...(claims.cn !== undefined ? { cn: claims.cn } : {}),
    ...(claims.dns?.length ? { dns: [...claims.dns] } : {}),
    ...(claims.ip?.length ? { ip: [...claims.ip] } : {}),
    ...(claims.email?.length ? { email: [...claims.email] } : {}),
    ...(claims.uri?.length ? { uri: [...claims.uri] } : {}),
    ...(claims.compliant !== undefined ? { compliant: claims.compliant } : {}),
  };
  const signingInput = `${b64(JSON.stringify(header))}.${b64(JSON.stringify(payload))}`;
  const token = `${signingInput}.${signJws(alg, privateKey, Buffer.from(signingInput, 'ascii')).toString('base64url')}`;
  parseMdmChallenge(token);
  return token;
}

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');
