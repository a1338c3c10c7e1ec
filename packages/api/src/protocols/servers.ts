import type { Services } from '@certwright/core';
import {
  type AcmeServer,
  type AcmeServerOptions,
  type AcmeServerSettings,
  createAcmeServer,
} from '@certwright/protocols/acme';
import { createEstServer, type EstServerOptions, type EstService } from '@certwright/protocols/est';
import { createScepServer, type ScepServer, type ScepServerOptions } from '@certwright/protocols/scep';

/**
 * The enrollment protocol servers of the composed handler, built once from the domain services:
 * their mounts answer the wire, their admin routes (counters, trust reloads, ACME accounts and
 * EAB keys) read the same instances. An embedder without createHandler calls `create<X>Server`
 * itself.
 */
export interface ProtocolServers {
  /** ACME: accounts, orders, challenges (and their validation jobs), revocation, ARI. */
  readonly acme: AcmeServer;
  readonly est: EstService;
  /** SCEP and its device-management challenges. */
  readonly scep: ScepServer;
}

/**
 * ACME server settings of the composed handler (the server reads `SVC_ACME_SERVER_*`): the
 * server's (default profile, caches, the validation queue) and its mount's.
 */
export interface AcmeMountOptions extends AcmeServerOptions {
  /** The external origin clients use; default each request's own origin. */
  baseUrl?: string;
  settings?: Partial<AcmeServerSettings>;
}

export interface ProtocolServerOptions {
  /** ACME: default profile, account and profile caches, the queue challenge validation runs on. */
  acme?: AcmeServerOptions;
  /** EST: default profile of the root routes, per-principal rate limit, trust bundle reader. */
  est?: EstServerOptions;
  /** SCEP: default profile of the root routes, device-management verifier and challenges, trust bundle reader. */
  scep?: ScepServerOptions;
}

export function createProtocolServers(
  services: Services,
  options: ProtocolServerOptions = {},
): ProtocolServers {
  return {
    acme: createAcmeServer(services, options.acme),
    est: createEstServer(services, options.est),
    scep: createScepServer(services, options.scep),
  };
}
