import { type CertwrightError, fail } from '@certwright/core';

/**
 * The outcome of checking one device-management (MDM) challenge, one label per outcome. The
 * labels name the per-profile counters an operator reads (docs/protocols/scep-mdm.md).
 */
export const MDM_CHALLENGE_STATUSES = [
  'success',
  'signature_invalid',
  'expired',
  'not_yet_valid',
  'wrong_audience',
  'replay',
  'rate_limited',
  'claim_mismatch',
  'compliance_failed',
  'malformed',
  'unknown_version',
] as const;
export type MdmChallengeStatus = (typeof MDM_CHALLENGE_STATUSES)[number];
export type MdmChallengeFailure = Exclude<MdmChallengeStatus, 'success'>;

/**
 * A refused challenge as a typed error: `extra.mdm_status` carries the label. The parser
 * throws these for `malformed` and `unknown_version`; the verifier answers every status as a
 * value and callers that prefer exceptions turn a failure into one with this.
 */
export function mdmFailure(status: MdmChallengeFailure, message: string, cause?: unknown): CertwrightError {
  return fail(REASONS[status], message, {
    extra: { mdm_status: status },
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * The domain reason of each failure. A refused challenge is the client's bad request, whatever
 * the cause: every reason here is one the SCEP failInfo table answers with `badRequest`
 * (a bad signature on the challenge is not a bad signature on the PKIMessage).
 */
const REASONS = {
  signature_invalid: 'unauthenticated',
  expired: 'unauthenticated',
  not_yet_valid: 'unauthenticated',
  wrong_audience: 'unauthenticated',
  replay: 'unauthenticated',
  rate_limited: 'rate_limited',
  claim_mismatch: 'names_mismatch',
  compliance_failed: 'not_permitted',
  malformed: 'malformed',
  unknown_version: 'malformed',
} as const satisfies Record<MdmChallengeFailure, string>;

/** The label of an error made by {@link mdmFailure}; undefined for any other error. */
export function mdmStatusOf(error: unknown): MdmChallengeFailure | undefined {
  const status = (error as { extra?: { mdm_status?: unknown } } | null)?.extra?.mdm_status;
  return typeof status === 'string' && (MDM_CHALLENGE_STATUSES as readonly string[]).includes(status)
    ? (status as MdmChallengeFailure)
    : undefined;
}
