import { fail } from '../errors.js';
import { peerChain } from '../node/index.js';
import { connectTcp, Deadline, handshake, type TrustAnchors } from './connect.js';
import type { AddressGuard } from './guard.js';

export interface TlsConnectOptions {
  /** A DNS name or an address literal; checked by the guard like any destination. */
  host: string;
  port: number;
  /**
   * The SNI name (and the name verified against). Default: `host` when it is a DNS name, none
   * for an address literal; `null` sends none. tls-alpn-01 for an IP identifier passes the
   * reverse-DNS name (RFC 8738 §6).
   */
  servername?: string | null;
  /** ALPN protocols offered, e.g. `['acme-tls/1']`. */
  alpn?: readonly string[];
  /** Verify the peer's chain and name; default true. `false` returns whatever the peer sent. */
  verify?: boolean;
  ca?: TrustAnchors;
  /** Lookup, connect and handshake within this; default 10 000 ms. */
  timeoutMs?: number;
  /** Oldest protocol offered (default TLS 1.2); network scans observe down to `TLSv1`. */
  minVersion?: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';
  /** Names the host input in errors (default `host`). */
  field?: string;
}

export interface TlsConnectResult {
  /** The normalized host. */
  host: string;
  /** The checked address connected to. */
  address: string;
  port: number;
  servername: string | null;
  /** The protocol the peer selected, or null when it selected none. */
  alpnProtocol: string | null;
  /** e.g. `TLSv1.3`. */
  protocol: string | null;
  /** The negotiated cipher suite's standard name, e.g. `TLS_AES_128_GCM_SHA256`. */
  cipher: string | null;
  /** The peer's certificates, DER, leaf first; empty when it sent none. */
  peerCertificates: Uint8Array[];
  /** Whether the chain and name verified (always computed; only enforced with `verify`). */
  authorized: boolean;
  /** OpenSSL's reason when not authorized, e.g. `DEPTH_ZERO_SELF_SIGNED_CERT`. */
  authorizationError?: string;
  timing: { dnsMs: number; connectMs: number; tlsMs: number; totalMs: number };
}

/**
 * Connects to a checked address of `host`, runs the TLS handshake with SNI and ALPN, reads the
 * peer's certificates and closes. For tls-alpn-01 validation and endpoint checks.
 */
export async function guardedTlsConnect(
  guard: AddressGuard,
  options: TlsConnectOptions,
): Promise<TlsConnectResult> {
  const field = options.field ?? 'host';
  if (!Number.isInteger(options.port) || options.port < 1 || options.port > 65535) {
    throw fail('invalid_input', `port ${options.port} is not a TCP port`, {
      fields: [{ field: 'port', message: 'must be an integer from 1 to 65535' }],
    });
  }
  const started = performance.now();
  const deadline = Deadline.after(
    options.timeoutMs ?? 10_000,
    `'${options.host}' did not complete a TLS handshake in time`,
  );
  const checked = await deadline.race(guard.resolve(options.host, field), () => {});
  const servername =
    options.servername === undefined ? (checked.literal ? null : checked.host) : options.servername;
  const connectStart = performance.now();
  const { socket, address } = await connectTcp(checked.host, checked.addresses, options.port, deadline);
  const connectMs = performance.now() - connectStart;
  const tlsStart = performance.now();
  try {
    const secure = await handshake(
      checked.host,
      socket,
      {
        ...(servername === null ? {} : { servername }),
        ...(options.alpn ? { alpn: options.alpn } : {}),
        ...(options.verify === undefined ? {} : { verify: options.verify }),
        ...(options.ca === undefined ? {} : { ca: options.ca }),
        ...(options.minVersion === undefined ? {} : { minVersion: options.minVersion }),
      },
      deadline,
    );
    const tlsMs = performance.now() - tlsStart;
    const result: TlsConnectResult = {
      host: checked.host,
      address,
      port: options.port,
      servername,
      alpnProtocol: secure.alpnProtocol || null,
      protocol: secure.getProtocol(),
      cipher: secure.getCipher()?.standardName ?? null,
      peerCertificates: peerChain(secure),
      authorized: secure.authorized,
      timing: { dnsMs: checked.dnsMs, connectMs, tlsMs, totalMs: performance.now() - started },
    };
    if (!secure.authorized && secure.authorizationError)
      result.authorizationError = String(secure.authorizationError);
    // Flush the last handshake flight and close_notify before closing, so the peer sees a
    // completed handshake and a clean close rather than a reset.
    secure.destroySoon();
    return result;
  } catch (error) {
    socket.destroy();
    throw error;
  }
}
