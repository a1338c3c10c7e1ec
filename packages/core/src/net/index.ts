/**
 * `@certwright/core/net`: the outbound address guard, the guarded HTTP(S) and TLS client, and
 * the ACME challenge validators built on them. Policy and API:
 * docs/operations/outbound-connections.md, docs/protocols/acme-validation.md.
 */
export {
  ACME_IDENTIFIER_OID,
  acmeIdentifierExtension,
  dns01TxtValue,
  keyAuthorizationDigest,
} from './acme-challenges/key-authorization.js';
export { reverseDnsName } from './acme-challenges/reverse-name.js';
export { ACME_TLS_ALPN_PROTOCOL } from './acme-challenges/tls-alpn-01.js';
export type {
  AcmeChallengeType,
  ChallengeToValidate,
  ChallengeValidator,
  ChallengeValidatorOptions,
} from './acme-challenges/types.js';
export {
  createChallengeValidator,
  DEFAULT_CHALLENGE_TIMEOUT_MS,
  DEFAULT_DNS01_RESOLVER,
} from './acme-challenges/validator.js';
export { type AddressCategory, type AddressClass, parseAddress } from './address-ranges.js';
export {
  type AdministratorClientOptions,
  administratorFetchFailed,
  createAdministratorClient,
  refusedDestination,
} from './administrator-client.js';
export { type AddressAllowlist, EMPTY_ALLOWLIST, parseAllowlist } from './allowlist.js';
export { createOutboundClient, type OutboundClient, type OutboundClientOptions } from './client.js';
export type { TrustAnchors } from './connect.js';
export {
  type AddressDecision,
  type AddressGuard,
  type AddressGuardOptions,
  type CheckedHost,
  createAddressGuard,
} from './guard.js';
export { type NormalizedHost, normalizeHost } from './host.js';
export type { OutboundRequestOptions, OutboundResponse, OutboundTiming } from './http-request.js';
export {
  type DnsServerResolverOptions,
  dnsServerResolver,
  type Resolver,
  staticResolver,
  systemResolver,
} from './resolver.js';
export type { TlsConnectOptions, TlsConnectResult } from './tls-connect.js';
export { createWebhookClient, type WebhookClientOptions } from './webhook-client.js';
