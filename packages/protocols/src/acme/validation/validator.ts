import { validationError } from '@certwright/core';
import {
  createOutboundClient,
  dnsServerResolver,
  parseAllowlist,
  systemResolver,
} from '@certwright/core/net';
import { z } from 'zod';
import { withinBudget } from './budget.js';
import { subjectText, vetChallenge } from './challenge.js';
import { dnsServerSetting, serverTxtLookup, type TxtLookup, validateDns01 } from './dns-01.js';
import { validateHttp01 } from './http-01.js';
import { validateTlsAlpn01 } from './tls-alpn-01.js';
import type { ChallengeValidator, ChallengeValidatorOptions } from './types.js';

export const DEFAULT_DNS01_RESOLVER = '8.8.8.8:53';
export const DEFAULT_CHALLENGE_TIMEOUT_MS = 30_000;

const port = z.number().int().min(1).max(65535);
const optionsSchema = z.object({
  httpPort: port.optional(),
  tlsAlpnPort: port.optional(),
  dns01Resolver: z.string().optional(),
  validationResolver: z.string().optional(),
  allowedRanges: z.array(z.string()).optional(),
  // A validation that may run for hours would hold a worker of its pool; ten minutes is plenty.
  timeoutMs: z.number().int().min(1).max(600_000).optional(),
});

/**
 * The validators of RFC 8555 §8.3 (http-01), §8.4 (dns-01) and RFC 8737 (tls-alpn-01), for dns
 * and IP (RFC 8738) identifiers. http-01 and tls-alpn-01 connect only through the outbound
 * address guard, with loopback admitted only when `allowedRanges` lists it; dns-01 asks its own
 * DNS server. Options are checked here, once (`invalid_input` naming the option).
 * Behaviour and reasons: docs/protocols/acme-validation.md.
 */
export function createChallengeValidator(options: ChallengeValidatorOptions = {}): ChallengeValidator {
  const checked = optionsSchema.safeParse(options);
  if (!checked.success) {
    throw validationError(
      checked.error.issues.map((issue) => ({
        field: issue.path.join('.') || 'options',
        message: issue.message,
      })),
    );
  }
  const httpPort = options.httpPort ?? 80;
  const tlsAlpnPort = options.tlsAlpnPort ?? 443;
  const timeoutMs = options.timeoutMs ?? DEFAULT_CHALLENGE_TIMEOUT_MS;
  const client = createOutboundClient({
    allowlist: parseAllowlist(options.allowedRanges ?? [], 'allowedRanges'),
    loopback: 'when-listed',
    resolve:
      options.resolver ??
      (options.validationResolver === undefined
        ? systemResolver
        : dnsServerResolver(dnsServerSetting(options.validationResolver, 'validationResolver'))),
    userAgent: 'certwright-acme-validator',
  });
  const seam = options.txtResolver;
  const txt: TxtLookup = seam
    ? (name) => seam(name)
    : serverTxtLookup(dnsServerSetting(options.dns01Resolver ?? DEFAULT_DNS01_RESOLVER, 'dns01Resolver'));

  return async (challenge, signal) => {
    const vetted = vetChallenge(challenge);
    const what = `the ${vetted.type} validation of '${subjectText(vetted.subject)}'`;
    return withinBudget(timeoutMs, signal, what, (budget) => {
      switch (vetted.type) {
        case 'http-01':
          return validateHttp01(vetted, { client, httpPort, tlsAlpnPort }, budget);
        case 'dns-01':
          return validateDns01(vetted, txt, budget);
        case 'tls-alpn-01':
          return validateTlsAlpn01(vetted, { client, tlsAlpnPort }, budget);
      }
    });
  };
}
