import { type CertwrightError, validationError } from '@certwright/core';
import type { IpAddress } from '@certwright/core/net';
import { normalizeHost } from '@certwright/core/net';
import { z } from 'zod';
import type { AcmeChallengeType, ChallengeToValidate } from './types.js';

/** What a validation connects to and compares against, derived from the challenge once. */
export type Subject =
  | { type: 'dns'; name: string; wildcard: boolean }
  | { type: 'ip'; address: IpAddress; text: string };

export interface VettedChallenge {
  type: AcmeChallengeType;
  subject: Subject;
  token: string;
  keyAuthorization: string;
}

/** RFC 8555 §8.1: a token and a thumbprint are base64url without padding. */
const BASE64URL = /^[A-Za-z0-9_-]+$/;

const challengeSchema = z.object({
  type: z.enum(['http-01', 'dns-01', 'tls-alpn-01']),
  identifier: z.object({ type: z.enum(['dns', 'ip']), value: z.string().min(1).max(255) }),
  // The token becomes a URL path segment and the key authorization a compared value: both stay
  // within base64url so neither can change what is fetched or shown.
  token: z.string().min(1).max(256).regex(BASE64URL, 'must be base64url'),
  keyAuthorization: z.string().min(3).max(512),
});

const invalid = (field: string, message: string): CertwrightError =>
  validationError([{ field, message }], `challenge ${field}: ${message}`);

function subjectOf(type: AcmeChallengeType, identifier: ChallengeToValidate['identifier']): Subject {
  const field = 'identifier.value';
  if (identifier.type === 'ip') {
    if (type === 'dns-01') throw invalid('type', 'dns-01 is not offered for an IP identifier (RFC 8738 §7)');
    const host = normalizeHost(identifier.value, field);
    if (host.kind !== 'ip') throw invalid(field, 'an ip identifier must be an IP address');
    return { type: 'ip', address: host.address, text: host.text };
  }
  const wildcard = identifier.value.startsWith('*.');
  if (wildcard && type !== 'dns-01')
    throw invalid('type', `${type} is not offered for a wildcard identifier`);
  const host = normalizeHost(wildcard ? identifier.value.slice(2) : identifier.value, field);
  if (host.kind !== 'name') throw invalid(field, 'a dns identifier must be a DNS name, not an address');
  return { type: 'dns', name: host.name, wildcard };
}

/**
 * Checks that the caller built the challenge right (a bug otherwise, refused with
 * `invalid_input` before any connection) and derives what the validation works on.
 */
export function vetChallenge(challenge: ChallengeToValidate): VettedChallenge {
  const parsed = challengeSchema.safeParse(challenge);
  if (!parsed.success) {
    throw validationError(
      parsed.error.issues.map((issue) => ({
        field: issue.path.length > 0 ? issue.path.join('.') : 'challenge',
        message: issue.message,
      })),
    );
  }
  const { type, identifier, token, keyAuthorization } = parsed.data;
  const thumbprint = keyAuthorization.slice(token.length + 1);
  if (!keyAuthorization.startsWith(`${token}.`) || !BASE64URL.test(thumbprint)) {
    throw invalid('keyAuthorization', "must be the token, '.', and the base64url account key thumbprint");
  }
  return { type, subject: subjectOf(type, identifier), token, keyAuthorization };
}

/** The identifier as the messages name it. */
export const subjectText = (subject: Subject): string =>
  subject.type === 'ip' ? subject.text : subject.wildcard ? `*.${subject.name}` : subject.name;
