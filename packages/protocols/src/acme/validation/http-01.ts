import { type CertwrightError, fail, isCertwrightError } from '@certwright/core';
import type { OutboundClient } from '@certwright/core/net';
import type { Budget } from './budget.js';
import type { VettedChallenge } from './challenge.js';
import { shown } from './shown.js';

export interface Http01Settings {
  client: OutboundClient;
  httpPort: number;
  tlsAlpnPort: number;
}

/** Bigger than any key authorization; a server that sends more is not answering the challenge. */
export const HTTP01_MAX_BODY_BYTES = 8 * 1024;
export const HTTP01_MAX_REDIRECTS = 10;

/** The URL the ACME client must serve the key authorization at (RFC 8555 §8.3). */
export function http01Url(challenge: VettedChallenge, port: number): string {
  const { subject } = challenge;
  const host =
    subject.type === 'dns'
      ? subject.name
      : subject.address.kind() === 'ipv6'
        ? `[${subject.text}]`
        : subject.text;
  return `http://${host}${port === 80 ? '' : `:${port}`}/.well-known/acme-challenge/${challenge.token}`;
}

const portOf = (url: URL): number => Number(url.port) || (url.protocol === 'https:' ? 443 : 80);

/**
 * Fetches the key authorization through the guarded client — every hop resolved once, every
 * address checked, the socket opened on a checked address — and compares the body, trailing
 * whitespace removed, with the key authorization exactly.
 */
export async function validateHttp01(
  challenge: VettedChallenge,
  settings: Http01Settings,
  budget: Budget,
): Promise<void> {
  const url = http01Url(challenge, settings.httpPort);
  const ports = { 'http:': new Set([80, settings.httpPort]), 'https:': new Set([443, settings.tlsAlpnPort]) };
  let refusedHop: URL | undefined;
  let response: Awaited<ReturnType<OutboundClient['request']>>;
  try {
    response = await settings.client.request(url, {
      redirect: 'follow',
      maxRedirects: HTTP01_MAX_REDIRECTS,
      allowRedirect: (to) => {
        const allowed = ports[to.protocol as 'http:' | 'https:']?.has(portOf(to)) ?? false;
        if (!allowed) refusedHop = to;
        return allowed;
      },
      maxResponseBytes: HTTP01_MAX_BODY_BYTES,
      // What proves control is the body, not the TLS identity of a redirect target: a client
      // redirecting to https with a self-signed certificate still answers the challenge.
      tls: { verify: false },
      headers: { accept: '*/*' },
      timeoutMs: budget.remainingMs(),
      totalTimeoutMs: budget.remainingMs(),
      field: 'identifier',
    });
  } catch (error) {
    throw outcomeOf(error, url, refusedHop, settings);
  }
  const where = response.url;
  if (response.status !== 200) {
    throw fail(
      'incorrect_response',
      `expected HTTP 200 with the key authorization from ${where}, got HTTP ${response.status}`,
    );
  }
  const body = new TextDecoder().decode(response.body).trimEnd();
  if (body !== challenge.keyAuthorization) {
    throw fail(
      'incorrect_response',
      `the key authorization at ${where} does not match: expected '${challenge.keyAuthorization}', got '${shown(body)}'`,
    );
  }
}

/** Maps the guarded client's failures to the validator's reasons. */
function outcomeOf(
  error: unknown,
  url: string,
  refusedHop: URL | undefined,
  settings: Http01Settings,
): CertwrightError {
  if (!isCertwrightError(error)) {
    return fail('connection_failed', `fetching ${url} failed`, { cause: error });
  }
  switch (error.reason) {
    case 'address_refused':
    case 'dns_failed':
    case 'connection_failed':
    case 'timed_out':
    case 'tls_failed':
      return error;
    case 'response_too_large':
      return fail(
        'incorrect_response',
        `the answer to ${url} is larger than ${HTTP01_MAX_BODY_BYTES} bytes; expected only the key authorization`,
        { cause: error },
      );
    case 'redirect_refused':
      return fail(
        'connection_failed',
        refusedHop
          ? `the redirect to ${shown(refusedHop.href, 200)} is not followed: only http on port ${[...new Set([80, settings.httpPort])].join(' or ')} and https on port ${[...new Set([443, settings.tlsAlpnPort])].join(' or ')}`
          : `${error.message} while fetching ${url}`,
        { cause: error },
      );
    default:
      // invalid_input from a redirect Location the client cannot use (a bad host, say).
      return fail('connection_failed', `${error.message} (while fetching ${url})`, { cause: error });
  }
}
