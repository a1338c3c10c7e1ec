import { type CertwrightError, fail, isCertwrightError } from '../errors.js';
import { parseAllowlist } from './allowlist.js';
import { createOutboundClient, type OutboundClient } from './client.js';
import type { Resolver } from './resolver.js';

export interface AdministratorClientOptions {
  /** Default the system resolver. */
  resolve?: Resolver;
  /**
   * Test rigs only: admit loopback (127.0.0.0/8, ::1), so identity providers, ACME directories
   * and scanned servers on this machine can be reached. No configuration variable sets it.
   */
  loopbackForTests?: boolean;
  userAgent?: string;
}

/**
 * The guarded client of destinations an administrator names on purpose (external ACME
 * directories, OIDC discovery, scan targets and health checks): public and private addresses
 * admitted, since such servers often live on internal networks; loopback, link-local, cloud
 * metadata, reserved, benchmarking and documentation space refused
 * (docs/operations/outbound-connections.md).
 */
export function createAdministratorClient(options: AdministratorClientOptions = {}): OutboundClient {
  return createOutboundClient({
    operatorConfigured: true,
    ...(options.loopbackForTests
      ? { loopback: 'when-listed', allowlist: parseAllowlist('127.0.0.0/8, ::1', 'loopback') }
      : {}),
    ...(options.resolve ? { resolve: options.resolve } : {}),
    ...(options.userAgent ? { userAgent: options.userAgent } : {}),
  });
}

/**
 * The one answer to a failed fetch of a URL an administrator named, whatever failed: no
 * listener, a reset, a TLS failure, a timeout, an HTTP error, an answer that is not what was
 * asked for. Telling these apart would let whoever may set such a URL map the ports of internal
 * hosts; the administrator finds the cause in the server log. `what` names the destination
 * ("the ACME directory"), never the cause.
 */
export function administratorFetchFailed(what: string, cause: unknown): CertwrightError {
  return fail('unavailable', `${what} could not be fetched; the server log has the cause`, { cause });
}

/**
 * The guard's refusal or a refused URL, found in `error` or its causes (a library may wrap what
 * the outbound client threw): those are the caller's own input, answered as they are.
 */
export function refusedDestination(error: unknown): CertwrightError | undefined {
  for (let e: unknown = error, depth = 0; e !== undefined && depth < 5; depth++) {
    if (isCertwrightError(e) && e.code === 'validation_failed') return e;
    e = (e as { cause?: unknown } | null)?.cause;
  }
  return undefined;
}
