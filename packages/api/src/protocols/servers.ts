import type { Services } from '@certwright/core';
import { createEstServer, type EstServerOptions, type EstService } from '@certwright/protocols/est';

/**
 * The enrollment protocol servers of the composed handler, built once from the domain services:
 * their mounts answer the wire, their admin routes (counters, trust reloads) read the same
 * instances. An embedder without createHandler calls `create<X>Server` itself.
 */
export interface ProtocolServers {
  readonly est: EstService;
}

export interface ProtocolServerOptions {
  /** EST: default profile of the root routes, per-principal rate limit, trust bundle reader. */
  est?: EstServerOptions;
}

export function createProtocolServers(
  services: Services,
  options: ProtocolServerOptions = {},
): ProtocolServers {
  return { est: createEstServer(services, options.est) };
}
