import { createHash } from 'node:crypto';
import {
  type CertificateProfile,
  type EnrollmentSecrets,
  fail,
  type ServiceDeps,
  verifyPassword,
} from '@certwright/core';
import type { CertificationRequest } from '@certwright/core/pki';

/**
 * Who a SCEP request is from, judged by the challengePassword of its CSR (RFC 8894 §2.3): the
 * profile's static password today; with `scep.mdm.enabled`, a challenge signed by the device
 * manager, checked by the verifier plugged in as {@link ScepChallengeOptions.mdm}.
 * docs/protocols/scep.md, "Challenges".
 */

export interface ScepChallengeRequest {
  profile: CertificateProfile;
  /** The profile's opened write-only secrets (`scep.challenge_password` is an scrypt hash). */
  secrets: EnrollmentSecrets;
  messageType: 'PKCSReq' | 'RenewalReq';
  /** The CSR, its signature verified; `challengePassword` is what the client sent. */
  csr: CertificationRequest;
  transactionId: string;
  remoteAddress: string;
}

/** How the request proved itself; `details` go on its audit event (never a secret). */
export interface ScepChallengeVerdict {
  method: 'static' | 'renewal' | 'mdm';
  details: Record<string, string>;
}

/**
 * A device-management challenge verifier: resolves to a verdict with method `mdm`, or throws a
 * typed failure (`unauthenticated` for a bad challenge, `names_mismatch` for claims the CSR
 * does not match, `rate_limited`, …) that becomes a CertRep FAILURE.
 */
export type ScepMdmVerifier = (
  request: ScepChallengeRequest,
  deps: ServiceDeps,
) => Promise<ScepChallengeVerdict>;

export interface ScepChallengeOptions {
  mdm?: ScepMdmVerifier;
  /** Successful static checks remembered (scrypt costs ~100 ms), by a hash of profile, password and stored hash. */
  cache?: Map<string, number>;
  cacheMs?: number;
}

/** Longest challengePassword read (the PKCS#9 upper bound is 255). */
const MAX_CHALLENGE = 4096;

/**
 * Checks the challenge of one PKCSReq or RenewalReq. A RenewalReq is authenticated by the
 * certificate that signed it (checked by the caller), so on a static-password profile it needs
 * no challenge; on a device-management profile the verifier decides.
 */
export async function checkScepChallenge(
  deps: ServiceDeps,
  request: ScepChallengeRequest,
  options: ScepChallengeOptions = {},
): Promise<ScepChallengeVerdict> {
  const { profile, csr } = request;
  if (profile.scep.mdm.enabled) {
    if (!options.mdm) {
      throw fail(
        'issuer_not_ready',
        `SCEP profile '${profile.id}' expects device-management challenges, and no verifier is configured`,
      );
    }
    return options.mdm(request, deps);
  }
  if (request.messageType === 'RenewalReq') return { method: 'renewal', details: {} };
  const stored = request.secrets.scep?.challenge_password;
  const given = csr.challengePassword;
  if (given === undefined) throw fail('unauthenticated', 'the CSR carries no challengePassword');
  if (!stored) throw fail('unauthenticated', 'this SCEP profile has no challenge password configured');
  if (given.length > MAX_CHALLENGE || !(await matches(deps, profile.id, given, stored, options))) {
    throw fail('unauthenticated', 'the challenge password is wrong');
  }
  return { method: 'static', details: {} };
}

async function matches(
  deps: ServiceDeps,
  profileId: string,
  given: string,
  stored: string,
  options: ScepChallengeOptions,
): Promise<boolean> {
  const cache = options.cache;
  const key = createHash('sha256').update(`${profileId}\0${given}\0${stored}`).digest('base64');
  const now = deps.clock.now().getTime();
  const until = cache?.get(key);
  if (until !== undefined && until > now) return true;
  // verifyPassword compares the scrypt outputs in constant time.
  const ok = await verifyPassword(given, stored);
  if (ok && cache) {
    if (cache.size >= 1000) cache.clear();
    cache.set(key, now + (options.cacheMs ?? 5 * 60_000));
  }
  return ok;
}
