/**
 * `@certwright/core/net`: the outbound address guard and the guarded HTTP(S) and TLS client
 * (the ACME challenge validators built on them are in `@certwright/protocols/acme`). Policy
 * and API: docs/operations/outbound-connections.md.
 */
export { type AddressCategory, type AddressClass, type IpAddress, parseAddress } from './address-ranges.js';
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
