import type { Logger, TransportContext } from '@certwright/core';
import type { Principal } from '../auth/principal.js';
import { problem } from '../http/problem.js';
import type { JsonResult } from '../http/route.js';
import type { Router } from '../http/router.js';
import { agentScopeRefusal } from './agent-scope.js';
import type { Authenticate } from './authenticate.js';
import { csrfRefusal } from './csrf.js';
import { mediaTypeRefusal } from './media-type.js';
import type { Outcome } from './outcome.js';
import { permissionRefusal } from './permission.js';
import { type PublicRateLimit, tooManyRequests } from './rate-limit.js';
import { validatedInput } from './validate.js';

export interface RouteStepsOptions {
  router: Router;
  rateLimit: PublicRateLimit;
  authenticate: Authenticate;
  maxBodyBytes: number;
  logger: Logger;
}

/** The steps of a request to a REST route (or to no route): the Web entry only. */
export type ServeRoute = (
  request: Request,
  url: URL,
  transport: TransportContext,
  requestId: string,
  outcome: Outcome,
) => Promise<Response>;

/**
 * Route match; a public route spends the client's rate limit, any other authenticates; an
 * unknown path is 404 and a known one under another method 405 only then (no route map for
 * strangers); CSRF, agent scope, permission, media type, validation; then the route's handler.
 */
export function routeSteps({
  router,
  rateLimit,
  authenticate,
  maxBodyBytes,
  logger,
}: RouteStepsOptions): ServeRoute {
  return async (request, url, transport, requestId, outcome) => {
    const match = router.match(request.method, url.pathname);
    const access =
      match.kind === 'route'
        ? match.spec.public
        : match.kind === 'method_not_allowed'
          ? match.public
          : undefined;
    if (match.kind === 'route') {
      outcome.route = match.spec.path;
      outcome.operationId = match.spec.operationId;
    }
    let principal: Principal | null = null;
    if (access) {
      const limited = await rateLimit(access, request, transport, outcome);
      if (limited !== undefined)
        return tooManyRequests(requestId, limited, 'too many requests from this client');
    } else {
      const admitted = await authenticate(request, transport, requestId, outcome);
      if (admitted instanceof Response) return admitted;
      principal = admitted;
    }
    if (match.kind === 'none') {
      return problem({ status: 404, code: 'not_found', detail: `no route for ${url.pathname}`, requestId });
    }
    if (match.kind === 'method_not_allowed') {
      return problem({
        status: 405,
        code: 'method_not_allowed',
        detail: `${request.method} is not allowed here; allowed: ${match.allow.join(', ')}`,
        requestId,
        headers: { allow: match.allow.join(', ') },
      });
    }
    const { spec } = match;
    const refused =
      csrfRefusal(principal, request, requestId) ??
      agentScopeRefusal(principal, spec.operationId, requestId) ??
      (spec.permission === null ? undefined : permissionRefusal(principal, spec.permission, requestId)) ??
      mediaTypeRefusal(spec, request, requestId);
    if (refused) return refused;
    const input = await validatedInput(spec, match.params, request, url, maxBodyBytes, requestId);
    if (input instanceof Response) return input;
    const result = await spec.handle({
      ...input,
      request,
      transport,
      principal,
      requestId,
      logger: logger.child({ request_id: requestId }),
    });
    return result instanceof Response ? result : jsonResponse(result);
  };
}

function jsonResponse(result: JsonResult): Response {
  const headers = new Headers(result.headers);
  if (result.body === undefined) return new Response(null, { status: result.status, headers });
  headers.set('content-type', 'application/json');
  return new Response(JSON.stringify(result.body), { status: result.status, headers });
}
