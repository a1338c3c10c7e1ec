import type { Handler, Logger, Services } from '@certwright/core';
import { DEFAULT_OCSP_REQUEST_LIMITS } from '@certwright/core/pki';
import { CRL_BASE_PATH, createCrlHandler } from '@certwright/protocols/crl';
import { createOcspHandler, OCSP_BASE_PATH } from '@certwright/protocols/ocsp';

/**
 * The revocation-status protocol handlers (CRL, OCSP) under /.well-known/pki/, composed into
 * createHandler when services are present. They answer in their own wire formats, without
 * authentication (spec §4.11), with the REST body limit as an upper bound.
 */
export interface ProtocolRoute {
  /** Route template for metrics and logs; never the raw path. */
  route: string;
  handler: Handler;
}

export function pkiProtocolRoutes(
  services: Services,
  options: { maxBodyBytes: number; logger: Logger },
): (pathname: string) => ProtocolRoute | null {
  const status = services.pki.revocationStatus;
  const crl: ProtocolRoute = {
    route: `${CRL_BASE_PATH}/{issuer_id}`,
    handler: createCrlHandler({ source: status }),
  };
  const ocsp: ProtocolRoute = {
    route: `${OCSP_BASE_PATH}/{issuer_id}`,
    handler: createOcspHandler({
      source: status,
      now: () => services.deps.clock.now(),
      limits: {
        ...DEFAULT_OCSP_REQUEST_LIMITS,
        maxBytes: Math.min(DEFAULT_OCSP_REQUEST_LIMITS.maxBytes, options.maxBodyBytes),
      },
      onError: (error) => options.logger.error({ err: error }, 'OCSP request failed'),
    }),
  };
  return (pathname) => {
    if (pathname === CRL_BASE_PATH || pathname.startsWith(`${CRL_BASE_PATH}/`)) return crl;
    if (pathname === OCSP_BASE_PATH || pathname.startsWith(`${OCSP_BASE_PATH}/`)) return ocsp;
    return null;
  };
}
