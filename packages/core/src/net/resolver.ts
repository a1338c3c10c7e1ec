import { promises as dns } from 'node:dns';
import { type CertwrightError, fail, isCertwrightError } from '../errors.js';
import { parseAddress } from './address-ranges.js';

/**
 * Turns a DNS name into its addresses. The guard calls it exactly once per connection and
 * connects only to what it returned and passed the check. It may throw anything: the guard
 * reports a throw (or an empty answer) as `dns_failed`.
 */
export type Resolver = (name: string) => Promise<string[]>;

/** The `dns_failed` error for `name`, carrying the resolver's code (ENOTFOUND, ESERVFAIL …). */
export function dnsFailure(name: string, cause: unknown): CertwrightError {
  if (isCertwrightError(cause) && cause.reason === 'dns_failed') return cause;
  const code = (cause as { code?: unknown } | undefined)?.code;
  const why = typeof code === 'string' && /^[A-Z_]{3,30}$/.test(code) ? code : 'no address';
  return fail('dns_failed', `'${name}' does not resolve (${why})`, { cause, extra: { host: name } });
}

/** The operating system's resolver (`getaddrinfo`: /etc/hosts, then DNS), in its own order. */
export const systemResolver: Resolver = async (name) => {
  try {
    return (await dns.lookup(name, { all: true, verbatim: true })).map((a) => a.address);
  } catch (error) {
    throw dnsFailure(name, error);
  }
};

export interface DnsServerResolverOptions {
  /** Per-query timeout; default 5000 ms. */
  timeoutMs?: number;
  /** Attempts per query; default 2. */
  tries?: number;
}

/**
 * A resolver that asks one DNS server (`ip`, `ip:port`, `[ipv6]:port`) for AAAA and A records,
 * never the system resolver — for ACME validation, which must see what a named server says.
 * IPv6 addresses come first; the name fails with `dns_failed` when neither query answers. A server that is not an IP address is refused with `invalid_input`.
 */
export function dnsServerResolver(server: string, options: DnsServerResolverOptions = {}): Resolver {
  const match = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(server) ?? /^([^:]+)(?::(\d{1,5}))?$/.exec(server);
  const host = match?.[1] ?? server;
  const port = match?.[2] === undefined ? 53 : Number(match[2]);
  const address = parseAddress(host);
  if (!address || port < 1 || port > 65535) {
    const message = `'${server.slice(0, 100)}' is not a DNS server address (ip, ip:port or [ipv6]:port)`;
    throw fail('invalid_input', message, { fields: [{ field: 'resolver', message }] });
  }
  const resolver = new dns.Resolver({ timeout: options.timeoutMs ?? 5000, tries: options.tries ?? 2 });
  resolver.setServers([address.kind() === 'ipv6' ? `[${host}]:${port}` : `${host}:${port}`]);
  return async (name) => {
    const [v6, v4] = await Promise.allSettled([resolver.resolve6(name), resolver.resolve4(name)]);
    const addresses = [
      ...(v6.status === 'fulfilled' ? v6.value : []),
      ...(v4.status === 'fulfilled' ? v4.value : []),
    ];
    if (addresses.length > 0) return addresses;
    // Both failed or both empty: report the IPv4 error (the usual one), else IPv6's.
    throw dnsFailure(
      name,
      v4.status === 'rejected' ? v4.reason : v6.status === 'rejected' ? v6.reason : undefined,
    );
  };
}

/**
 * A fixed table, name → addresses; an unknown name fails like NXDOMAIN. For tests, and for
 * embedders that pin names to addresses; names are matched lower-case without trailing dot.
 */
export function staticResolver(table: Readonly<Record<string, string | readonly string[]>>): Resolver {
  const entries = new Map(
    Object.entries(table).map(([name, addresses]) => [
      name.toLowerCase().replace(/\.$/, ''),
      typeof addresses === 'string' ? [addresses] : [...addresses],
    ]),
  );
  return async (name) => {
    const found = entries.get(name.toLowerCase().replace(/\.$/, ''));
    if (!found) throw dnsFailure(name, { code: 'ENOTFOUND' });
    return [...found];
  };
}
