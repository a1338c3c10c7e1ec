import { createHash } from 'node:crypto';
import { type Clock, type EphemeralStore, fail, type Logger, publicMessage } from '@certwright/core';
import { jwsAlgorithmFitsKey, verifyJwsSignature } from '@certwright/core/pki';
import { type CsrNames, claimMismatch } from './claim-match.js';
import { MDM_CHALLENGE_STATUSES, type MdmChallengeStatus, mdmStatusOf } from './status.js';
import {
  DEFAULT_MDM_TOKEN_LIMITS,
  type MdmChallengeClaims,
  type MdmTokenLimits,
  type ParsedMdmChallenge,
  parseMdmChallenge,
} from './token.js';
import { type MdmSigner, MdmTrustAnchors } from './trust-anchors.js';

/**
 * Checks device-management challenges for a SCEP profile: signature by one of the profile's
 * MDM signing certificates, validity period with a small clock skew, the profile's maximum
 * lifetime, audience, the CSR's names against the claims, compliance, and single use of the
 * `jti` — and keeps a per-profile count of every outcome and a per-device limit on failed
 * attempts. Replay cache, counters and limits live in the ephemeral store, so every instance
 * on one store agrees. docs/protocols/scep-mdm.md describes the format and the order of checks.
 */

/** The device-management settings of a profile that checking a challenge reads. */
export interface MdmChallengeSettings {
  /** PEM file of the MDM signing certificate(s); null: no challenge can verify. */
  trust_bundle_path: string | null;
  /** The audience a challenge must name; null: `urn:certwright:scep:<profile id>`. */
  audience: string | null;
  /** Longest a challenge is accepted after its `iat`, whatever its `exp` says. */
  max_lifetime_seconds: number;
  /** A challenge must carry `compliant: true`. */
  require_compliance: boolean;
}

export interface MdmChallengeInput {
  profileId: string;
  settings: MdmChallengeSettings;
  /** The CSR's challengePassword; undefined when it carries none. */
  challenge: string | undefined;
  csr: CsrNames;
  /** The client's address: the device key of the failure limit when the CSR has no common name. */
  remoteAddress: string;
}

export interface MdmChallengeResult {
  status: MdmChallengeStatus;
  /** Why, in words fit for the client and the audit trail (no paths, no internals). */
  message: string;
  /** The claims of a challenge that parsed (present from signature checking on). */
  claims?: MdmChallengeClaims;
  /** The subject of the certificate that signed it, once the signature verified. */
  signer?: string;
}

export interface MdmFailureLimit {
  /** Failed attempts one device may make in `windowMs` before it is locked out for `windowMs`. */
  limit: number;
  windowMs: number;
}

export const DEFAULT_MDM_FAILURE_LIMIT: Readonly<MdmFailureLimit> = Object.freeze({
  limit: 10,
  windowMs: 15 * 60_000,
});

/** Seconds a challenge's times may be off from ours (RFC 7519 §4.1.4 allows "a small leeway"). */
export const DEFAULT_MDM_CLOCK_SKEW_SECONDS = 60;

export interface MdmVerifierOptions {
  clockSkewSeconds?: number;
  /** null: no per-device limit. */
  failureLimit?: MdmFailureLimit | null;
  /** Reads a trust file; default `fs.readFile(path, 'utf8')`. */
  readTrustFile?: (path: string) => Promise<string>;
  tokenLimits?: MdmTokenLimits;
}

export interface MdmVerifierDeps {
  clock: Clock;
  ephemeral: EphemeralStore;
  logger: Logger;
}

/** The audience of a profile whose settings name none. */
export const defaultMdmAudience = (profileId: string): string => `urn:certwright:scep:${profileId}`;

const KEY = 'scep-mdm';
const counterKey = (profileId: string, status: MdmChallengeStatus) => `${KEY}:count:${profileId}:${status}`;
const generationKey = (profileId: string) => `${KEY}:trust-generation:${profileId}`;

export class MdmChallengeVerifier {
  readonly trust: MdmTrustAnchors;
  readonly #skew: number;
  readonly #limit: MdmFailureLimit | null;
  readonly #tokenLimits: MdmTokenLimits;
  /** The trust generation each profile's anchors were loaded at (see `reloadTrust`). */
  readonly #generations = new Map<string, number>();

  constructor(
    private readonly deps: MdmVerifierDeps,
    options: MdmVerifierOptions = {},
  ) {
    this.trust = new MdmTrustAnchors(options.readTrustFile);
    this.#skew = options.clockSkewSeconds ?? DEFAULT_MDM_CLOCK_SKEW_SECONDS;
    this.#limit = options.failureLimit === undefined ? DEFAULT_MDM_FAILURE_LIMIT : options.failureLimit;
    this.#tokenLimits = options.tokenLimits ?? DEFAULT_MDM_TOKEN_LIMITS;
  }

  /**
   * Checks one challenge and counts its outcome. Every refusal is a status, never an
   * exception; the only exception is the ephemeral store failing where single use cannot be
   * guaranteed without it (`unavailable`).
   */
  async verify(input: MdmChallengeInput): Promise<MdmChallengeResult> {
    const device = deviceKey(input);
    let result: MdmChallengeResult;
    if (await this.#lockedOut(input.profileId, device)) {
      result = { status: 'rate_limited', message: 'too many failed challenges from this device; try later' };
    } else {
      result = await this.#check(input);
      if (result.status !== 'success') await this.#recordFailure(input.profileId, device);
    }
    await this.#count(input.profileId, result.status);
    return result;
  }

  /** Per-status totals of a profile, every label present (0 included), in label order. */
  async counters(profileId: string): Promise<Record<MdmChallengeStatus, number>> {
    const totals = await this.deps.ephemeral.readCounters(
      MDM_CHALLENGE_STATUSES.map((s) => counterKey(profileId, s)),
    );
    return Object.fromEntries(MDM_CHALLENGE_STATUSES.map((s, i) => [s, totals[i] ?? 0])) as Record<
      MdmChallengeStatus,
      number
    >;
  }

  /**
   * Re-reads a profile's trust file. On failure the anchors in force stay and the typed error
   * is thrown. On success the profile's trust generation in the ephemeral store moves on, so
   * every other instance re-reads the file before its next check.
   */
  async reloadTrust(profileId: string, path: string) {
    const set = await this.trust.reload(profileId, path, this.deps.clock.now());
    try {
      this.#generations.set(profileId, await this.deps.ephemeral.incrementCounter(generationKey(profileId)));
    } catch (cause) {
      this.deps.logger.warn({ err: cause, profile_id: profileId }, 'MDM trust generation not shared');
    }
    return set;
  }

  async #check(input: MdmChallengeInput): Promise<MdmChallengeResult> {
    if (input.challenge === undefined || input.challenge.trim() === '') {
      return { status: 'malformed', message: 'the CSR carries no challengePassword' };
    }
    let parsed: ParsedMdmChallenge;
    try {
      parsed = parseMdmChallenge(input.challenge.trim(), this.#tokenLimits);
    } catch (error) {
      const status = mdmStatusOf(error);
      if (!status) throw error;
      return { status, message: publicMessage(error) };
    }
    const { claims } = parsed;
    const found = await this.#signerOf(input, parsed);
    if (typeof found === 'string') return { status: 'signature_invalid', message: found, claims };
    const signer = found.info.subject.text;

    const now = this.deps.clock.now().getTime() / 1000;
    const skew = this.#skew;
    const start = Math.max(claims.iat, claims.nbf ?? claims.iat);
    if (now + skew < start) {
      return { status: 'not_yet_valid', message: 'the challenge is not valid yet', claims, signer };
    }
    const end = Math.min(claims.exp, claims.iat + input.settings.max_lifetime_seconds);
    if (now - skew >= end) {
      return {
        status: 'expired',
        message:
          end < claims.exp
            ? `the challenge is older than this profile's maximum lifetime (${input.settings.max_lifetime_seconds} s)`
            : 'the challenge has expired',
        claims,
        signer,
      };
    }
    const audience = input.settings.audience ?? defaultMdmAudience(input.profileId);
    if (!claims.aud.includes(audience)) {
      return { status: 'wrong_audience', message: 'the challenge is for another audience', claims, signer };
    }
    const mismatch = claimMismatch(claims, input.csr);
    if (mismatch) return { status: 'claim_mismatch', message: mismatch, claims, signer };
    if (input.settings.require_compliance && claims.compliant !== true) {
      return {
        status: 'compliance_failed',
        message:
          claims.compliant === false
            ? 'the device management system reports the device as not compliant'
            : 'the challenge carries no compliance claim and this profile requires one',
        claims,
        signer,
      };
    }
    // Single use is spent last, so a challenge refused for another reason is not used up.
    const ttlMs = Math.max(1, Math.ceil((end + skew - now) * 1000));
    const jtiKey = `${KEY}:jti:${input.profileId}:${digest(`${claims.iss}\0${claims.jti}`)}`;
    let first: boolean;
    try {
      first = await this.deps.ephemeral.putIfAbsent(jtiKey, String(Math.floor(now)), ttlMs);
    } catch (cause) {
      throw fail('unavailable', 'the challenge cannot be checked for reuse now', { cause });
    }
    if (!first) return { status: 'replay', message: 'the challenge has already been used', claims, signer };
    return { status: 'success', message: 'the challenge is valid', claims, signer };
  }

  /** The trust anchor that signed, or why the signature is not accepted. */
  async #signerOf(input: MdmChallengeInput, parsed: ParsedMdmChallenge): Promise<MdmSigner | string> {
    const path = input.settings.trust_bundle_path;
    if (!path) return 'this profile has no MDM trust file, so no challenge can verify';
    let signers: readonly MdmSigner[];
    try {
      signers = (await this.#anchors(input.profileId, path)).signers;
    } catch (error) {
      this.deps.logger.error(
        { err: error, profile_id: input.profileId },
        'MDM trust file cannot be loaded; challenges cannot verify',
      );
      return 'no MDM trust anchors are loaded';
    }
    const signer = signers.find((s) => s.thumbprint.equals(parsed.header.x5tS256));
    if (!signer) return 'the challenge is signed by a certificate this profile does not trust';
    if (!jwsAlgorithmFitsKey(parsed.header.alg, signer.info.publicKey)) {
      return `the algorithm ${parsed.header.alg} does not fit the signing certificate's key`;
    }
    if (!verifyJwsSignature(parsed.header.alg, signer.key, parsed.signingInput, parsed.signature)) {
      return 'the challenge signature does not verify';
    }
    const now = this.deps.clock.now();
    if (now < signer.info.notBefore || now > signer.info.notAfter) {
      return 'the certificate that signed the challenge is outside its validity period';
    }
    return signer;
  }

  /** The anchors in force, re-read first when another instance reloaded them since. */
  async #anchors(profileId: string, path: string) {
    let generation: number | undefined;
    try {
      [generation] = await this.deps.ephemeral.readCounters([generationKey(profileId)]);
    } catch (cause) {
      this.deps.logger.warn({ err: cause, profile_id: profileId }, 'MDM trust generation not read');
    }
    const known = this.#generations.get(profileId);
    const current = this.trust.peek(profileId);
    if (current && current.path === path && generation !== undefined && known !== generation) {
      try {
        await this.trust.reload(profileId, path, this.deps.clock.now());
      } catch (error) {
        this.deps.logger.error(
          { err: error, profile_id: profileId },
          'MDM trust file reload failed; the previous anchors stay in force',
        );
      }
      this.#generations.set(profileId, generation);
      return this.trust.peek(profileId)!;
    }
    const set = await this.trust.get(profileId, path, this.deps.clock.now());
    if (generation !== undefined && known === undefined) this.#generations.set(profileId, generation);
    return set;
  }

  async #lockedOut(profileId: string, device: string): Promise<boolean> {
    if (!this.#limit) return false;
    try {
      return (await this.deps.ephemeral.get(`${KEY}:lock:${profileId}:${device}`)) !== undefined;
    } catch (cause) {
      this.deps.logger.warn({ err: cause }, 'MDM failure limit not checked: the ephemeral store failed');
      return false;
    }
  }

  async #recordFailure(profileId: string, device: string): Promise<void> {
    const limit = this.#limit;
    if (!limit) return;
    try {
      const hit = await this.deps.ephemeral.slidingWindowHit(
        `${KEY}:failures:${profileId}:${device}`,
        limit.windowMs,
        limit.limit,
      );
      if (!hit.allowed || hit.count >= limit.limit) {
        await this.deps.ephemeral.putIfAbsent(`${KEY}:lock:${profileId}:${device}`, '1', limit.windowMs);
      }
    } catch (cause) {
      this.deps.logger.warn({ err: cause }, 'MDM failure not recorded: the ephemeral store failed');
    }
  }

  async #count(profileId: string, status: MdmChallengeStatus): Promise<void> {
    try {
      await this.deps.ephemeral.incrementCounter(counterKey(profileId, status));
    } catch (cause) {
      this.deps.logger.warn({ err: cause, profile_id: profileId, status }, 'MDM counter not updated');
    }
  }
}

const digest = (text: string): string => createHash('sha256').update(text).digest('base64url');

/**
 * The device a failed attempt is charged to: the common name the CSR claims (devices enroll
 * under their own name), or the client's address when the CSR has none.
 */
function deviceKey(input: MdmChallengeInput): string {
  const cn = input.csr.commonNames[0];
  return digest(cn ? `cn:${cn.toLowerCase()}` : `addr:${input.remoteAddress}`);
}
