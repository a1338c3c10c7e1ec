/**
 * `@certwright/protocols/acme`: the ACME server (RFC 8555, RFC 9773) — its service (`server/`),
 * its wire (`wire/`), its challenge validation (`validation/`) and its mount — and the http-01
 * answers of the ACME issuer connector.
 */
export { ACME_CHALLENGE_PATH, acmeChallengeMount } from './issuer-http01.js';
export { acmeMount } from './mount.js';
export {
  ACME_MAX_CONTACTS,
  type AcmeAccountOptions,
  AcmeAccountService,
  acmeAccountListSchema,
  acmeContactIssue,
  DEFAULT_ACME_ACCOUNT_CACHE_MS,
  eabKeyCreateSchema,
  eabKeyListSchema,
} from './server/accounts.js';
export {
  type AcmeKernel,
  AcmeServer,
  type AcmeServerOptions,
  createAcmeServer,
  DEFAULT_ACME_PROFILE_CACHE_MS,
  DEFAULT_ACME_PROFILE_ID,
} from './server/acme-server.js';
export {
  type AcmeChallengeOptions,
  AcmeChallengeService,
  type AcmeChallengeValidator,
} from './server/challenges.js';
export type { AcmeChallengeView, AcmeEnrollment, AcmeOrderView } from './server/common.js';
export { AcmeOrderService } from './server/orders.js';
export type { AcmeRenewalInfo } from './server/renewal-info.js';
export {
  type AcmeRevokeInput,
  type AcmeRevoker,
  acmeRevocationReason,
  spkiThumbprint,
} from './server/revoke.js';
export { ACME_VALIDATION_TOPICS, type AcmeValidationJob } from './server/validation-queue.js';
export {
  ACME_IDENTIFIER_OID,
  acmeIdentifierExtension,
  dns01TxtValue,
  keyAuthorizationDigest,
} from './validation/key-authorization.js';
export { reverseDnsName } from './validation/reverse-name.js';
export { ACME_TLS_ALPN_PROTOCOL } from './validation/tls-alpn-01.js';
export type {
  ChallengeToValidate,
  ChallengeValidator,
  ChallengeValidatorOptions,
} from './validation/types.js';
export {
  createChallengeValidator,
  DEFAULT_CHALLENGE_TIMEOUT_MS,
  DEFAULT_DNS01_RESOLVER,
} from './validation/validator.js';
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
