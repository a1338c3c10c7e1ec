import type { Logger } from '@certwright/core';
import { parseAllowlist } from '@certwright/core/net';
import { createChallengeValidator } from '@certwright/protocols/acme';
import type { ServiceConfig } from './config.js';
import type { WorkTopicOptions } from './workers.js';

/**
 * The ACME challenge validator of this server from `SVC_ACME_SERVER_*` (docs/operations/
 * configuration.md), with a loud warning when validation may reach the server's own host:
 * a client could then have this server fetch from services listening on loopback.
 */
export function acmeValidation(
  config: Pick<ServiceConfig, 'acmeValidation'>,
  logger: Logger,
): Omit<NonNullable<WorkTopicOptions['acmeValidation']>, 'challenges'> {
  const settings = config.acmeValidation;
  const loopback = parseAllowlist(
    settings.allowedRanges,
    'SVC_ACME_SERVER_VALIDATION_ALLOWED_RANGES',
  ).loopbackEntries;
  if (loopback.length > 0) {
    logger.warn(
      { variable: 'SVC_ACME_SERVER_VALIDATION_ALLOWED_RANGES', loopback },
      'ACME challenge validation may connect to LOOPBACK addresses: any ACME client can make this ' +
        'server send requests to services on its own host. Only for tests and same-host setups; ' +
        'you MUST remove the loopback entries in production.',
    );
  }
  const validator = createChallengeValidator({
    httpPort: settings.httpPort,
    tlsAlpnPort: settings.tlsAlpnPort,
    dns01Resolver: settings.dns01Resolver,
    ...(settings.validationResolver ? { validationResolver: settings.validationResolver } : {}),
    allowedRanges: settings.allowedRanges,
  });
  return {
    validator,
    concurrency: {
      'http-01': settings.concurrency.http01,
      'dns-01': settings.concurrency.dns01,
      'tls-alpn-01': settings.concurrency.tlsAlpn01,
    },
  };
}
