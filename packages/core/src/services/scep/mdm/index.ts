export { type CsrNames, claimMismatch } from './claim-match.js';
export { type MintScepChallengeInput, mintScepChallenge } from './mint.js';
export {
  csrNames,
  type MdmTrustAnchorView,
  SCEP_MDM_TRUST_RELOADED,
  type ScepMdmOptions,
  type ScepMdmProfileStats,
  type ScepMdmReloaded,
  ScepMdmService,
  type ScepMdmSnapshot,
} from './service.js';
export {
  MDM_CHALLENGE_STATUSES,
  type MdmChallengeFailure,
  type MdmChallengeStatus,
  mdmFailure,
  mdmStatusOf,
} from './status.js';
export {
  DEFAULT_MDM_TOKEN_LIMITS,
  MDM_CHALLENGE_ALGORITHMS,
  MDM_CHALLENGE_TYPES,
  MDM_CHALLENGE_VERSION,
  type MdmChallengeAlgorithm,
  type MdmChallengeClaims,
  type MdmChallengeHeader,
  type MdmChallengeNames,
  type MdmTokenLimits,
  type ParsedMdmChallenge,
  parseMdmChallenge,
} from './token.js';
export {
  MAX_MDM_SIGNERS,
  type MdmAnchorSet,
  type MdmSigner,
  MdmTrustAnchors,
  parseMdmSigners,
} from './trust-anchors.js';
export {
  DEFAULT_MDM_CLOCK_SKEW_SECONDS,
  DEFAULT_MDM_FAILURE_LIMIT,
  defaultMdmAudience,
  type MdmChallengeInput,
  type MdmChallengeResult,
  type MdmChallengeSettings,
  MdmChallengeVerifier,
  type MdmFailureLimit,
  type MdmVerifierDeps,
  type MdmVerifierOptions,
} from './verifier.js';
