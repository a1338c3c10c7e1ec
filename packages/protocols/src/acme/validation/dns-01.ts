import { promises as dns } from 'node:dns';
import { type CertwrightError, fail, isCertwrightError } from '@certwright/core';
import { parseAddress } from '@certwright/core/net';
import type { Budget } from './budget.js';
import type { VettedChallenge } from './challenge.js';
import { dns01TxtValue } from './key-authorization.js';
import { shown } from './shown.js';

/** The TXT records of a name, each as its character-strings; throws with a DNS error `code`. */
export type TxtLookup = (name: string, budget: Budget) => Promise<string[][]>;

/** Parses `ip`, `ip:port` or `[ipv6]:port` into the form `Resolver.setServers` takes. */
export function dnsServerSetting(text: string, field: string): string {
  const match = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(text) ?? /^([^:]+)(?::(\d{1,5}))?$/.exec(text);
  const host = match?.[1] ?? text;
  const port = match?.[2] === undefined ? 53 : Number(match[2]);
  const address = parseAddress(host);
  if (!address || port < 1 || port > 65535) {
    const message = `'${shown(text)}' is not a DNS server address (ip, ip:port or [ipv6]:port)`;
    throw fail('invalid_input', `${field}: ${message}`, { fields: [{ field, message }] });
  }
  return address.kind() === 'ipv6' ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * TXT lookups asked of one named server, never the system resolver: what counts is what the
 * DNS says, not a hosts file or a local cache. One resolver per lookup, so abandoning a
 * validation cancels exactly its own queries.
 */
export function serverTxtLookup(server: string): TxtLookup {
  return async (name, budget) => {
    const resolver = new dns.Resolver({ timeout: Math.min(5000, budget.remainingMs()), tries: 2 });
    resolver.setServers([server]);
    budget.onAbandon(() => resolver.cancel());
    return resolver.resolveTxt(name);
  };
}

/** No such name, or no TXT record at it: the DNS answered, the client has not published. */
const NO_RECORD = new Set(['ENOTFOUND', 'ENODATA']);

const codeOf = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[A-Z_]{3,30}$/.test(code) ? code : undefined;
};

function lookupFailure(name: string, expected: string, error: unknown): CertwrightError {
  if (isCertwrightError(error)) {
    if (error.reason === 'timed_out' || error.reason === 'incorrect_response') return error;
    // A test seam reporting NXDOMAIN the way the address resolvers do (dns_failed with a code).
    if (error.reason !== 'dns_failed') return fail('dns_failed', error.message, { cause: error });
  }
  const code = codeOf(error) ?? codeOf((error as { cause?: unknown } | undefined)?.cause);
  if (code && NO_RECORD.has(code)) {
    return fail(
      'incorrect_response',
      `no TXT record at '${name}' (${code === 'ENOTFOUND' ? 'no such name' : 'no TXT records'}); expected one with '${expected}'`,
      { cause: error },
    );
  }
  return fail('dns_failed', `the TXT lookup of '${name}' failed (${code ?? 'no answer'})`, { cause: error });
}

/**
 * RFC 8555 §8.4: some TXT record at `_acme-challenge.<name>` (a wildcard's `*.` removed) equals
 * base64url(SHA-256(key authorization)); the strings of one record are joined first.
 */
export async function validateDns01(
  challenge: VettedChallenge,
  lookup: TxtLookup,
  budget: Budget,
): Promise<void> {
  if (challenge.subject.type !== 'dns') throw fail('invalid_input', 'dns-01 validates dns identifiers only');
  const name = `_acme-challenge.${challenge.subject.name}`;
  const expected = dns01TxtValue(challenge.keyAuthorization);
  let records: string[][];
  try {
    records = await lookup(name, budget);
  } catch (error) {
    throw lookupFailure(name, expected, error);
  }
  const values = records.map((strings) => strings.join(''));
  if (values.includes(expected)) return;
  if (values.length === 0) {
    throw fail('incorrect_response', `no TXT record at '${name}'; expected one with '${expected}'`);
  }
  const seen = values
    .slice(0, 5)
    .map((v) => `'${shown(v)}'`)
    .join(', ');
  throw fail(
    'incorrect_response',
    `no TXT record at '${name}' matches: expected '${expected}', found ${values.length} (${seen}${values.length > 5 ? ', …' : ''})`,
  );
}
