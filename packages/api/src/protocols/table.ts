import { ephemeralHttp01Store, type Logger, MemoryEphemeralStore, type Services } from '@certwright/core';
import { acmeChallengeMount, acmeMount } from '@certwright/protocols/acme';
import { caIssuersMount, crlMount } from '@certwright/protocols/crl';
import { estMounts } from '@certwright/protocols/est';
import type { ProtocolMount } from '@certwright/protocols/mount';
import { ocspMount } from '@certwright/protocols/ocsp';
import { scepMounts } from '@certwright/protocols/scep';
import type { ClientAddressResolver } from '../http/client-address.js';
import type { AcmeMountOptions, ProtocolServers } from './servers.js';

export interface MountContext {
  services: Services;
  servers: ProtocolServers;
  maxBodyBytes: number;
  logger: Logger;
  /** ACME server settings (default profile, external base URL, ARI). */
  acme?: AcmeMountOptions;
  /** Who a request comes from (per-address limits inside a protocol). */
  clientAddress?: ClientAddressResolver;
}

/**
 * Every wire protocol the composed handler serves, one entry per path prefix. A protocol
 * plugs in by adding its mounts here: the prefix, the route template for metrics, the
 * handler from `@certwright/protocols/<protocol>`, its public declaration with its rate-limit
 * class, its over-limit answer and its OpenAPI operations (docs/architecture.md, "Protocols").
 */
export function protocolMounts(context: MountContext): ProtocolMount[] {
  const { services, servers, maxBodyBytes, logger, acme = {}, clientAddress } = context;
  const revocationStatus = services.pki.revocationStatus;
  return [
    crlMount({ source: revocationStatus }),
    caIssuersMount({ source: revocationStatus }),
    ocspMount({ source: revocationStatus, now: () => services.deps.clock.now(), maxBodyBytes, logger }),
    acmeMount({
      authority: servers.acme,
      ephemeral: services.deps.ephemeral ?? new MemoryEphemeralStore({ clock: services.deps.clock }),
      ...(acme.baseUrl ? { baseUrl: acme.baseUrl } : {}),
      ...(acme.settings ? { settings: acme.settings } : {}),
      ...(clientAddress ? { clientAddress } : {}),
      now: () => services.deps.clock.now(),
      logger,
    }),
    acmeChallengeMount(ephemeralHttp01Store(services.deps.ephemeral!)),
    ...estMounts({ authority: servers.est, logger }),
    ...scepMounts({ authority: servers.scep.scep, logger }),
  ];
}
