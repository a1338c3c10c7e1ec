import { isIP } from 'node:net';
import type { AcmeChallengeType, AcmeIdentifier } from '@certwright/core';
import { fail } from '@certwright/core';
import { bytesToIp, ipToBytes, lintCertificateNames } from '@certwright/core/pki';

/** Identifiers one order may name; a certificate with more names is an inventory of its own. */
export const MAX_ORDER_IDENTIFIERS = 100;

/** An identifier in the form it is authorized and signed in, with what it allows. */
export interface NormalizedIdentifier {
  identifier: AcmeIdentifier;
  /** `*.example.com`: the authorization is for `example.com` (RFC 8555 §7.1.3). */
  wildcard: boolean;
}

/**
 * Normalizes and lints the identifiers of a new order (RFC 8555 §7.4, RFC 8738 §3):
 * - `dns` values are lower-cased ASCII (A-labels); a U-label is refused — the client must send
 *   the A-label it wants on the certificate, so what is authorized is what is signed;
 * - `ip` values are rewritten to their canonical text (RFC 5952 for IPv6), so `::1` and
 *   `0:0::1` are one identifier;
 * - every name passes the certificate name lint (docs/pki.md) before anything is stored;
 * - duplicates after normalization collapse to one.
 * Refusals: `malformed` for an identifier that is not one, `name_rejected` for one that can
 * never be on a certificate, and `invalid_input` marked as ACME's `unsupportedIdentifier` for a
 * type other than `dns` and `ip` (RFC 8555 §7.4) — `email` (RFC 8823) included, which this
 * server does not certify.
 */
export function normalizeIdentifiers(
  identifiers: readonly { type: string; value: string }[],
): NormalizedIdentifier[] {
  if (identifiers.length === 0) throw fail('malformed', 'an order needs at least one identifier');
  if (identifiers.length > MAX_ORDER_IDENTIFIERS)
    throw fail('malformed', `an order may name at most ${MAX_ORDER_IDENTIFIERS} identifiers`);
  const seen = new Map<string, NormalizedIdentifier>();
  identifiers.forEach((given, i) => {
    const field = `identifiers.${i}`;
    if (given.type !== 'dns' && given.type !== 'ip') {
      const message = `identifier type '${given.type.slice(0, 32)}' is not supported here (dns and ip are)`;
      throw fail('invalid_input', message, {
        fields: [{ field: `${field}.type`, message }],
        extra: { acme_problem: 'unsupportedIdentifier' },
      });
    }
    const n = given.type === 'ip' ? normalizeIp(given.value, field) : normalizeDns(given.value, field);
    seen.set(`${n.identifier.type}:${n.identifier.value}`, n);
  });
  return [...seen.values()];
}

function normalizeIp(value: string, field: string): NormalizedIdentifier {
  // RFC 8738 §3: the textual form of an address; a zone index or a CIDR is not one.
  if (isIP(value) === 0 || value.includes('%'))
    throw fail('malformed', `'${value.slice(0, 64)}' is not an IP address`, {
      fields: [{ field, message: 'is not an IP address' }],
    });
  return { identifier: { type: 'ip', value: bytesToIp(ipToBytes(value)) }, wildcard: false };
}

function normalizeDns(value: string, field: string): NormalizedIdentifier {
  if (!/^[\x21-\x7e]+$/.test(value))
    throw fail('name_rejected', `'${value.slice(0, 64)}' is not an ASCII DNS name (send the A-label)`, {
      fields: [{ field, message: 'is not an ASCII DNS name' }],
    });
  const lower = value.toLowerCase();
  const { problems } = lintCertificateNames({ sans: [{ type: 'dns', value: lower }] });
  const first = problems[0];
  if (first) throw fail('name_rejected', first.message, { fields: [{ field, message: first.message }] });
  const wildcard = lower.startsWith('*.');
  return { identifier: { type: 'dns', value: lower }, wildcard };
}

/** `localhost`, names below it (RFC 6761 §6.3) and loopback addresses: every machine's own. */
function namesEveryMachine(identifier: AcmeIdentifier): boolean {
  if (identifier.type === 'ip') return identifier.value === '::1' || identifier.value.startsWith('127.');
  const name = identifier.value.startsWith('*.') ? identifier.value.slice(2) : identifier.value;
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * Refuses an order for `localhost`, a name below it or a loopback address unless the profile
 * says `acme.allow_localhost`: such a name is every machine's, and no CA should certify it.
 * `name_not_allowed` (ACME `rejectedIdentifier`) naming the identifier.
 */
export function checkLocalhost(identifiers: readonly NormalizedIdentifier[], allowed: boolean): void {
  if (allowed) return;
  const index = identifiers.findIndex((n) => namesEveryMachine(n.identifier));
  if (index < 0) return;
  const { value } = identifiers[index]!.identifier;
  const message = `'${value}' names every machine's own host; this profile does not certify it (acme.allow_localhost is false)`;
  throw fail('name_not_allowed', message, { fields: [{ field: `identifiers.${index}`, message }] });
}

/**
 * The challenges an authorization offers, from the profile's list: a wildcard can only be
 * proven through DNS (RFC 8555 §7.1.3), an IP address never through DNS (RFC 8738 §7).
 * `name_not_allowed` when the profile leaves no way to prove the identifier.
 */
export function challengeTypesFor(
  n: NormalizedIdentifier,
  offered: readonly AcmeChallengeType[],
): AcmeChallengeType[] {
  const usable = offered.filter((t) => {
    if (n.wildcard) return t === 'dns-01';
    if (n.identifier.type === 'ip') return t !== 'dns-01';
    return true;
  });
  if (usable.length === 0) {
    const why = n.wildcard
      ? 'a wildcard needs dns-01, which this profile does not offer'
      : 'an IP address needs http-01 or tls-alpn-01, which this profile does not offer';
    throw fail('name_not_allowed', `'${n.identifier.value}' cannot be authorized here: ${why}`);
  }
  return usable;
}

/** The value a certificate carries for an identifier (the wildcard name for a wildcard). */
export const identifierKey = (i: AcmeIdentifier): string => `${i.type}:${i.value}`;
