import { acmeMount } from './acme.js';
import type { ProtocolMount } from './mount.js';
import { crlMount, type MountContext, ocspMount } from './revocation-status.js';

/**
 * Every wire protocol the composed handler serves, one entry per path prefix. A protocol
 * plugs in by adding its mounts here: the prefix, the route template for metrics, the
 * handler from `@certwright/protocols/<protocol>`, its public declaration with its rate-limit
 * class, its over-limit answer and its OpenAPI operations (docs/architecture.md, "Protocols").
 *
 * Coming: EST (`/.well-known/est`, `/.well-known/est-mtls`,
 * `enrollment`), SCEP (`/scep`, `/scep-mtls`, `enrollment`).
 */
export function protocolMounts(context: MountContext): ProtocolMount[] {
  return [crlMount(context), ocspMount(context), acmeMount(context)];
}

export type { MountContext };
