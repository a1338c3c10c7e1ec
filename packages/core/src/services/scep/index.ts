export {
  checkScepChallenge,
  type ScepChallengeOptions,
  type ScepChallengeRequest,
  type ScepChallengeVerdict,
  type ScepMdmVerifier,
} from './challenge.js';
export { SCEP_RA_VALIDITY_DAYS, type ScepRa, type ScepRaKey, ScepRaKeys } from './ra.js';
export {
  DEFAULT_SCEP_RATE_LIMIT,
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
} from './service.js';
