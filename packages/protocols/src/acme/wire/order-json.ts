import type {
  AcmeAuthorizationWithChallenges,
  AcmeChallenge,
  AcmeOrder,
  AcmeProblem,
} from '@certwright/core';
import type { AcmeOrderView } from '../server/common.js';
import type { AcmeLinks } from './links.js';
import { ACME_ERROR_PREFIX, storedProblemStatus } from './problem.js';

/** The JSON of orders, authorizations and challenges (RFC 8555 §7.1.3–7.1.5). */

const rfc3339 = (date: Date): string => date.toISOString();

/** A stored problem as the `error` member of a challenge or an order (RFC 8555 §7.1.3, §7.1.5). */
export function problemJson(problem: AcmeProblem): { type: string; detail: string; status: number } {
  return {
    type: `${ACME_ERROR_PREFIX}${problem.type}`,
    detail: problem.detail,
    status: storedProblemStatus(problem.type),
  };
}

export function challengeJson(challenge: AcmeChallenge, links: AcmeLinks): Record<string, unknown> {
  return {
    type: challenge.type,
    url: links.challenge(challenge.id),
    status: challenge.status,
    token: challenge.token,
    ...(challenge.validated_at ? { validated: rfc3339(challenge.validated_at) } : {}),
    ...(challenge.error ? { error: problemJson(challenge.error) } : {}),
  };
}

export function authorizationJson(
  authz: AcmeAuthorizationWithChallenges,
  links: AcmeLinks,
): Record<string, unknown> {
  return {
    identifier: authz.identifier,
    status: authz.status,
    expires: rfc3339(authz.expires),
    challenges: authz.challenges.map((c) => challengeJson(c, links)),
    ...(authz.wildcard ? { wildcard: true } : {}),
  };
}

export function orderJson(view: AcmeOrderView, links: AcmeLinks): Record<string, unknown> {
  const order: AcmeOrder = view.order;
  return {
    status: order.status,
    expires: rfc3339(order.expires),
    identifiers: order.identifiers,
    ...(order.not_before ? { notBefore: rfc3339(order.not_before) } : {}),
    ...(order.not_after ? { notAfter: rfc3339(order.not_after) } : {}),
    ...(order.error ? { error: problemJson(order.error) } : {}),
    authorizations: view.authorizations.map((a) => links.authz(a.id)),
    finalize: links.finalize(order.id),
    ...(order.status === 'valid' && order.version_id ? { certificate: links.cert(order.id) } : {}),
    ...(order.acme_profile ? { profile: order.acme_profile } : {}),
    ...(order.replaces ? { replaces: order.replaces } : {}),
  };
}
