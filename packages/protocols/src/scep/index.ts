/** `@certwright/protocols/scep`: the SCEP server's wire (RFC 8894) and its mounts. */

export { type ScepMountOptions, scepMounts } from './mount.js';
export {
  checkScepChallenge,
  type ScepChallengeOptions,
  type ScepChallengeRequest,
  type ScepChallengeVerdict,
  type ScepMdmVerifier,
} from './server/challenge.js';
export { type CsrNames, claimMismatch } from './server/mdm/claim-match.js';
export { type MintScepChallengeInput, mintScepChallenge } from './server/mdm/mint.js';
export {
  csrNames,
  type MdmTrustAnchorView,
  SCEP_MDM_TRUST_RELOADED,
  type ScepMdmOptions,
  type ScepMdmProfileStats,
  type ScepMdmReloaded,
  ScepMdmService,
  type ScepMdmSnapshot,
} from './server/mdm/service.js';
export {
  MDM_CHALLENGE_STATUSES,
  type MdmChallengeFailure,
  type MdmChallengeStatus,
  mdmFailure,
  mdmStatusOf,
} from './server/mdm/status.js';
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
} from './server/mdm/token.js';
export {
  MAX_MDM_SIGNERS,
  type MdmAnchorSet,
  type MdmSigner,
  MdmTrustAnchors,
  parseMdmSigners,
} from './server/mdm/trust-anchors.js';
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
} from './server/mdm/verifier.js';
export { SCEP_RA_VALIDITY_DAYS, type ScepRa, type ScepRaKey, ScepRaKeys } from './server/ra.js';
export {
  createScepServer,
  type ScepKernel,
  type ScepServer,
  type ScepServerOptions,
} from './server/scep-server.js';
export {
  SCEP_AUDIT_ACTIONS,
  SCEP_CAPABILITIES,
  type ScepAuditAction,
  type ScepClient,
  type ScepIssuance,
  type ScepOperationResult,
  type ScepOptions,
  type ScepOutcome,
  type ScepProfileSnapshot,
  ScepService,
} from './server/service.js';
export type { ScepAuthority } from './wire/authority.js';
export { type ScepHttpFailure, scepFailInfo } from './wire/fail-info.js';
export {
  createScepHandler,
  parseScepPath,
  SCEP_BASE_PATH,
  SCEP_CA_CERT,
  SCEP_CA_RA_CERT,
  SCEP_MAX_BODY_BYTES,
  SCEP_MTLS_BASE_PATH,
  SCEP_OPERATIONS,
  SCEP_PKI_MESSAGE,
  type ScepHandler,
  type ScepHandlerOptions,
  type ScepOperation,
} from './wire/handler.js';
