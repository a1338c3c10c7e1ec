/**
 * ACME challenge validation (RFC 8555 §8.3–8.4, RFC 8737, RFC 8738) on the outbound address
 * guard. Behaviour and reasons: docs/protocols/acme-validation.md.
 */
export {
  ACME_IDENTIFIER_OID,
  acmeIdentifierExtension,
  dns01TxtValue,
  keyAuthorizationDigest,
} from './key-authorization.js';
export { reverseDnsName } from './reverse-name.js';
export { ACME_TLS_ALPN_PROTOCOL } from './tls-alpn-01.js';
export type {
  AcmeChallengeType,
  ChallengeToValidate,
  ChallengeValidator,
  ChallengeValidatorOptions,
} from './types.js';
export {
  createChallengeValidator,
  DEFAULT_CHALLENGE_TIMEOUT_MS,
  DEFAULT_DNS01_RESOLVER,
} from './validator.js';
