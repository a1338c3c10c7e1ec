import { isCertwrightError, publicMessage } from '../errors.js';
import type { OutboundClient } from '../net/client.js';
import { addressesOf, parseRange, refusedCategory, type ScanAddressPolicy } from './ranges.js';

/** One address, port and SNI name the scanner handshakes with. */
export interface ScanEndpoint {
  address: string;
  port: number;
  /** Sent as SNI; null sends none. */
  sni: string | null;
}

export type EndpointObservation =
  | {
      endpoint: ScanEndpoint;
      ok: true;
      /** The served certificates, DER, leaf first (as the peer sent them). */
      chain: Uint8Array[];
      protocol: string | null;
      cipher: string | null;
      handshakeMs: number;
    }
  | { endpoint: ScanEndpoint; ok: false; reason: string; message: string };

export interface ScannerOptions {
  /**
   * The guarded client: an operator-configured guard (scan targets are an administrator's
   * deliberate choice of internal ranges), see docs/api/discovery.md.
   */
  client: OutboundClient;
  /** Handshakes in flight at once; default {@link DEFAULT_SCAN_CONCURRENCY}. */
  concurrency?: number;
  /** Connect plus handshake, per endpoint; default {@link DEFAULT_SCAN_TIMEOUT_MS}. */
  timeoutMs?: number;
  policy?: ScanAddressPolicy;
}

export const DEFAULT_SCAN_CONCURRENCY = 64;
export const DEFAULT_SCAN_TIMEOUT_MS = 5_000;
/** Address × port × SNI combinations one scan may try. */
export const MAX_SCAN_ENDPOINTS = 65_536;

/** Handshakes with one endpoint and reports what it served; never throws. */
export async function observeEndpoint(
  endpoint: ScanEndpoint,
  options: ScannerOptions,
): Promise<EndpointObservation> {
  const refused = refusedCategory(endpoint.address, options.policy);
  if (refused) {
    return {
      endpoint,
      ok: false,
      reason: 'address_refused',
      message: `${refused.replace('_', '-')} addresses are never scanned`,
    };
  }
  try {
    const result = await options.client.connectTls({
      host: endpoint.address,
      port: endpoint.port,
      servername: endpoint.sni,
      verify: false,
      minVersion: 'TLSv1',
      timeoutMs: options.timeoutMs ?? DEFAULT_SCAN_TIMEOUT_MS,
      field: 'address',
    });
    if (result.peerCertificates.length === 0) {
      return { endpoint, ok: false, reason: 'tls_failed', message: 'the endpoint sent no certificate' };
    }
    return {
      endpoint,
      ok: true,
      chain: result.peerCertificates,
      protocol: result.protocol,
      cipher: result.cipher,
      handshakeMs: result.timing.connectMs + result.timing.tlsMs,
    };
  } catch (error) {
    return {
      endpoint,
      ok: false,
      reason: isCertwrightError(error) ? error.reason : 'internal',
      message: publicMessage(error),
    };
  }
}

/**
 * Handshakes with every endpoint, at most `concurrency` at a time, handing each observation
 * to `onResult` as it arrives (so a scan of thousands of endpoints never holds them all).
 * `onResult` is awaited: a slow consumer slows the scan instead of piling up results.
 */
export async function scanEndpoints(
  endpoints: Iterable<ScanEndpoint>,
  options: ScannerOptions,
  onResult: (observation: EndpointObservation) => Promise<void> | void,
): Promise<void> {
  const iterator = endpoints[Symbol.iterator]();
  const workers = Math.max(1, Math.min(options.concurrency ?? DEFAULT_SCAN_CONCURRENCY, 1024));
  const next = (): ScanEndpoint | undefined => {
    const step = iterator.next();
    return step.done ? undefined : step.value;
  };
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (let endpoint = next(); endpoint; endpoint = next()) {
        await onResult(await observeEndpoint(endpoint, options));
      }
    }),
  );
}

export interface ScanPlanInput {
  cidrs: readonly string[];
  hosts: readonly string[];
  ports: readonly number[];
  sni_names: readonly string[];
}

/**
 * The endpoints of a target: every address of its ranges on every port, without SNI and
 * with each SNI name; every address a host name resolves to on every port, with the host
 * name as SNI. Names are resolved through the client's guard (a name resolving to a refused
 * address is reported, not scanned).
 */
export async function planScan(
  target: ScanPlanInput,
  options: ScannerOptions,
): Promise<{ endpoints: ScanEndpoint[]; errors: EndpointObservation[] }> {
  const endpoints: ScanEndpoint[] = [];
  const errors: EndpointObservation[] = [];
  const snis: (string | null)[] = [null, ...target.sni_names];
  const push = (endpoint: ScanEndpoint) => {
    if (endpoints.length < MAX_SCAN_ENDPOINTS) endpoints.push(endpoint);
  };
  for (const text of target.cidrs) {
    for (const address of addressesOf(parseRange(text, 'cidrs', options.policy))) {
      for (const port of target.ports) for (const sni of snis) push({ address, port, sni });
    }
  }
  for (const host of target.hosts) {
    try {
      const checked = await options.client.guard.resolve(host, 'hosts');
      for (const address of checked.addresses) {
        for (const port of target.ports) push({ address, port, sni: checked.literal ? null : checked.host });
      }
    } catch (error) {
      for (const port of target.ports) {
        errors.push({
          endpoint: { address: host, port, sni: null },
          ok: false,
          reason: isCertwrightError(error) ? error.reason : 'internal',
          message: publicMessage(error),
        });
      }
    }
  }
  return { endpoints, errors };
}
