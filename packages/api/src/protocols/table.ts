import type { ProtocolMount } from '@certwright/protocols/mount';
import { acmeMount } from './acme.js';
import { acmeChallengeMount } from './acme-challenge.js';
import { estMounts } from './est.js';
import { crlMount, type MountContext, ocspMount } from './revocation-status.js';
import { scepMounts } from './scep.js';

/**
 * Every wire protocol the composed handler serves, one entry per path prefix. A protocol
 * plugs in by adding its mounts here: the prefix, the route template for metrics, the
 * handler from `@certwright/protocols/<protocol>`, its public declaration with its rate-limit
 * class, its over-limit answer and its OpenAPI operations (docs/architecture.md, "Protocols").
 */
export function protocolMounts(context: MountContext): ProtocolMount[] {
  return [
    crlMount(context),
    ocspMount(context),
    acmeMount(context),
    acmeChallengeMount(context),
    ...estMounts(context),
    ...scepMounts(context),
  ];
}

export type { MountContext };
