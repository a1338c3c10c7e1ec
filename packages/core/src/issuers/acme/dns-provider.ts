import { fail, isCertwrightError } from '../../errors.js';
import type { OutboundClient } from '../../net/client.js';
import type { AcmeIssuerSettings } from './settings.js';

/**
 * Where the ACME issuer connector publishes dns-01 TXT records (RFC 8555 §8.4). One
 * implementation ships: `pebble-challtestsrv`, the management API of Let's Encrypt's challenge
 * test server (`POST /set-txt`, `POST /clear-txt`), which is real on a test machine and in CI.
 * Embedders pass their own provider (a DNS host's API, RFC 2136 dynamic update) through
 * `AcmeConnectorDeps.dnsProvider`; docs/api/issuers.md describes the interface.
 */
export interface DnsProvider {
  /** Publishes TXT `value` at `fqdn` (fully qualified, with the trailing dot); resolves once it is served. */
  present(fqdn: string, value: string): Promise<void>;
  /** Removes what `present` published; called whatever the validation's outcome. */
  cleanup(fqdn: string, value: string): Promise<void>;
}

/** The challtestsrv provider, its management API reached through `outbound`. */
export function challTestSrvDnsProvider(managementUrl: string, outbound: OutboundClient): DnsProvider {
  const call = async (path: string, body: unknown) => {
    const res = await outbound
      .request(new URL(path, managementUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        field: 'config.dns_provider.management_url',
        timeoutMs: 10_000,
        maxResponseBytes: 4096,
      })
      .catch((cause: unknown) => {
        // The guard's refusal names the setting; a connection failure is logged, not shown.
        if (isCertwrightError(cause) && cause.code === 'validation_failed') throw cause;
        throw fail(
          'unavailable',
          `the DNS provider (config.dns_provider) could not be reached for ${path}; try again later`,
          {
            cause,
          },
        );
      });
    if (res.status !== 200) {
      throw fail('unavailable', `the DNS provider answered ${path} with HTTP ${res.status}`);
    }
  };
  return {
    present: (fqdn, value) => call('/set-txt', { host: fqdn, value }),
    cleanup: (fqdn) => call('/clear-txt', { host: fqdn }),
  };
}

/** The provider the settings name, or undefined when they name none. */
export function dnsProviderFromSettings(
  settings: AcmeIssuerSettings,
  outbound: OutboundClient,
): DnsProvider | undefined {
  const provider = settings.dns_provider;
  if (!provider) return undefined;
  return challTestSrvDnsProvider(provider.management_url, outbound);
}
