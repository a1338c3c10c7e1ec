import {
  type AddressGuard,
  type AddressGuardOptions,
  type CheckedHost,
  createAddressGuard,
} from './guard.js';
import {
  guardedRequest,
  type OutboundRequestOptions,
  type OutboundResponse,
  parseOutboundUrl,
} from './http-request.js';
import { guardedTlsConnect, type TlsConnectOptions, type TlsConnectResult } from './tls-connect.js';

/**
 * Every outbound connection to a destination a client, a user or an administrator names goes
 * through one of these (ACME validation, SCEP probes, webhooks, health checks). Services take
 * it as a dependency; tests build one with a `staticResolver` and a loopback allowlist.
 */
export interface OutboundClient {
  readonly guard: AddressGuard;
  /**
   * Vets a URL without connecting: http(s), no userinfo, host resolved once and every address
   * checked. For create/update-time validation; a later request checks again.
   */
  checkUrl(url: string | URL, field?: string): Promise<{ url: URL; host: CheckedHost }>;
  /** A guarded HTTP(S) request (see {@link OutboundRequestOptions}). */
  request(url: string | URL, options?: OutboundRequestOptions): Promise<OutboundResponse>;
  /** A guarded TLS handshake returning the peer's certificates (see {@link TlsConnectOptions}). */
  connectTls(options: TlsConnectOptions): Promise<TlsConnectResult>;
}

export interface OutboundClientOptions extends AddressGuardOptions {
  /** Sent unless a request gives its own; default `certwright`. */
  userAgent?: string;
}

export function createOutboundClient(options: OutboundClientOptions = {}): OutboundClient {
  const guard = createAddressGuard(options);
  const userAgent = options.userAgent ?? 'certwright';
  return {
    guard,
    async checkUrl(input, field = 'url') {
      const url = parseOutboundUrl(input, field);
      return { url, host: await guard.resolve(url.hostname, field) };
    },
    request: (url, requestOptions) => guardedRequest(guard, url, requestOptions, userAgent),
    connectTls: (tlsOptions) => guardedTlsConnect(guard, tlsOptions),
  };
}
