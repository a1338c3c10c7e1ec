/**
 * `@certwright/protocols/acme`: the ACME server (RFC 8555, RFC 9773) — its wire (`wire/`) and
 * its mount — and the http-01 answers of the ACME issuer connector.
 */
export { ACME_CHALLENGE_PATH, acmeChallengeMount } from './issuer-http01.js';
export { acmeMount } from './mount.js';
export type {
  AcmeAccountAuthority,
  AcmeAuthority,
  AcmeProfileSource,
  ExternalAccountBinding,
  NewAccountRequest,
} from './wire/authority.js';
export type {
  AccountAuthenticated,
  AcmeContext,
  AcmeEndpoint,
  AcmeServerSettings,
  Authenticated,
  AuthenticateOptions,
  AuthKind,
  JwkAuthenticated,
} from './wire/context.js';
export {
  ACME_BASE_PATH,
  type AcmeHandler,
  type AcmeHandlerOptions,
  createAcmeHandler,
  DEFAULT_ACME_SETTINGS,
} from './wire/handler.js';
export {
  ACME_JWS_ALGORITHMS,
  DEFAULT_JWS_LIMITS,
  type JwsLimits,
  parseJwsBody,
  parseJwsObject,
  verifyJws,
} from './wire/jws.js';
export { AcmeLinks } from './wire/links.js';
export { NonceStore } from './wire/nonces.js';
export type { AcmeOrderAuthority } from './wire/order-authority.js';
export {
  ACME_ERROR_PREFIX,
  AcmeProblemError,
  type AcmeProblemType,
  acmeProblem,
  isAcmeProblemError,
  problemForReason,
  problemFromError,
} from './wire/problem.js';
export { type AcmeLink, type AcmeResponseOptions, acmeBody, acmeEmpty, acmeJson } from './wire/responses.js';
export type { AcmeRoute } from './wire/routes.js';
