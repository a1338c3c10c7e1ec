import type { PlainResponse, RequestHead, TransportContext } from '@certwright/core';
import { type BodyReader, type ProtocolMount, tooManyRequestsText } from '@certwright/protocols/mount';
import { agentScopeRefusal } from './agent-scope.js';
import type { Authenticate } from './authenticate.js';
import { csrfRefusal } from './csrf.js';
import type { Outcome } from './outcome.js';
import { permissionRefusal } from './permission.js';
import type { PublicRateLimit } from './rate-limit.js';

/**
 * The steps of a request to a protocol mount, the same list for the Web entry and the direct
 * entry: name the route and operation; a public mount spends the client's rate limit (the
 * mount's own over-limit answer), any other authenticates like a REST route and is guarded
 * like one (agent scope, CSRF for cookies, the permission); then the mount answers.
 */
export type ServeProtocol = (
  mount: ProtocolMount,
  head: RequestHead,
  readBody: BodyReader,
  transport: TransportContext,
  requestId: string,
  outcome: Outcome,
) => Promise<Response | PlainResponse>;

export function protocolSteps(rateLimit: PublicRateLimit, authenticate: Authenticate): ServeProtocol {
  return async (mount, head, readBody, transport, requestId, outcome) => {
    outcome.route = mount.route;
    outcome.protocol = true;
    const operationId = mount.operationOf?.(head);
    if (operationId) outcome.operationId = operationId;
    if (mount.public) {
      // Not awaited when the class is off: the direct entry's OCSP answers take no extra turn.
      const spending = rateLimit(mount.public, head, transport, outcome);
      const limited = spending === undefined ? undefined : await spending;
      if (limited !== undefined) return (mount.rateLimited ?? tooManyRequestsText)(limited, head);
    } else {
      const principal = await authenticate(head, transport, requestId, outcome);
      if (principal instanceof Response) return principal;
      const refused =
        agentScopeRefusal(principal, undefined, requestId) ??
        csrfRefusal(principal, head, requestId) ??
        permissionRefusal(principal, mount.permission!, requestId);
      if (refused) return refused;
    }
    return mount.answer(head, readBody, transport);
  };
}
