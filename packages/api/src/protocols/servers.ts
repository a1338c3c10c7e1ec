import type { Services } from '@certwright/core';
import { createEstServer, type EstServerOptions, type EstService } from '@certwright/protocols/est';
import { createScepServer, type ScepServer, type ScepServerOptions } from '@certwright/protocols/scep';

/**
 * The enrollment protocol servers of the composed handler, built once from the domain services:
 * their mounts answer the wire, their admin routes (counters, trust reloads) read the same
 * instances. An embedder without createHandler calls `create<X>Server` itself.
 */
export interface ProtocolServers {
  readonly est: EstService;
  /** SCEP and its device-management challenges. */
  readonly scep: ScepServer;
}

export interface ProtocolServerOptions {
  /** EST: default profile of the root routes, per-principal rate limit, trust bundle reader. */
  est?: EstServerOptions;
  /** SCEP: default profile of the root routes, device-management verifier and challenges, trust bundle reader. */
  scep?: ScepServerOptions;
}

export function createProtocolServers(
  services: Services,
  options: ProtocolServerOptions = {},
): ProtocolServers {
  return { est: createEstServer(services, options.est), scep: createScepServer(services, options.scep) };
}
