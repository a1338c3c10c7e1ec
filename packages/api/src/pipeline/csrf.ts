import type { RequestHead } from '@certwright/core';
import type { Principal } from '../auth/principal.js';
import { csrfMatches, sessionTokenOf } from '../auth/session-cookie.js';
import { problem } from '../http/problem.js';

export const STATE_CHANGING: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * A browser sends cookies on cross-site requests too; only the web client can echo the CSRF
 * cookie back in a header. A cookie-authenticated change without it is a 403.
 */
export function csrfRefusal(
  principal: Principal | null,
  head: RequestHead,
  requestId: string,
): Response | undefined {
  if (!principal?.viaCookie || !STATE_CHANGING.has(head.method)) return undefined;
  const token = sessionTokenOf(head);
  if (token !== null && csrfMatches(head, token)) return undefined;
  return problem({
    status: 403,
    code: 'forbidden',
    detail: 'a cookie-authenticated change needs the X-CSRF-Token header',
    requestId,
  });
}
