import { randomUUID } from 'node:crypto';
import {
  CertwrightError,
  type Handler,
  isCertwrightError,
  type Logger,
  type Services,
  silentLogger,
  type TransportContext,
} from '@certwright/core';
import {
  ANONYMOUS_ADMIN,
  type Authenticator,
  type AuthSettings,
  apiKeyAuthenticator,
  bearerToken,
  type Principal,
} from './auth/principal.js';
import { requiresAuthentication } from './auth/public-routes.js';
import { problem, problemFromError } from './http/problem.js';
import type { JsonResult, RouteSpec } from './http/route.js';
import { Router } from './http/router.js';
import { parsePart, queryObject, readJsonBody } from './http/validate.js';
import { buildOpenApiDocument, type OpenApiDocument } from './openapi/document.js';
import { pkiProtocolRoutes } from './pki-protocols.js';
import { AGENT_OPERATION_IDS } from './routes/agents.js';
import { featureRoutes } from './routes/index.js';
import { type ReadinessCheck, systemRoutes, type VersionInfo } from './routes/system.js';

export interface HandlerOptions {
  auth: AuthSettings;
  version?: Partial<VersionInfo>;
  /** Reports each dependency; /ready answers 503 while any is not ok. */
  readiness?: ReadinessCheck;
  /** Prometheus exposition for GET /metrics (authenticated); absent → no such route. */
  metrics?: () => Promise<{ contentType: string; body: string }>;
  logger?: Logger;
  /** Largest JSON body accepted; default 1 MiB. */
  maxBodyBytes?: number;
  /** Additional principals (agent keys, sessions) tried after the API key. */
  authenticators?: Authenticator[];
  /** The domain services; when given, every feature route (inventory, agents, …) is served. */
  services?: Services;
  /** An embedder's own REST routes, served after the feature routes in the order given. */
  routes?: readonly RouteSpec[];
  /** Called once per request, after the response is built (metrics, access logs). */
  onResponse?: (event: ResponseEvent) => void;
}

export interface ResponseEvent {
  method: string;
  /** Route template (`/api/v1/agents/{id}`), or `unmatched`; never the raw path. */
  route: string;
  status: number;
  durationMs: number;
}

export interface CertwrightHandler extends Handler {
  readonly openapi: OpenApiDocument;
  readonly routes: readonly RouteSpec[];
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Composes every REST route into one Web-standard handler. */
export function createHandler(options: HandlerOptions): CertwrightHandler {
  const logger = options.logger ?? silentLogger;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const authenticators: Authenticator[] = [
    ...(options.auth.type === 'api-key' ? [apiKeyAuthenticator(options.auth.secret)] : []),
    ...(options.authenticators ?? []),
    ...(options.services ? [agentKeyAuthenticator(options.services)] : []),
  ];
  let openapi: OpenApiDocument;
  const routes: RouteSpec[] = systemRoutes({
    authType: options.auth.type,
    version: options.version ?? {},
    readiness: options.readiness,
    metrics: options.metrics,
    openapi: () => openapi,
  });
  if (options.services) routes.push(...featureRoutes(options.services));
  routes.push(...(options.routes ?? []));
  openapi = buildOpenApiDocument(routes, { version: options.version?.version ?? '2.0.0' });
  const router = new Router(routes);
  // CRL and OCSP (/.well-known/pki/…) are protocol handlers, dispatched by prefix before routing.
  const protocolRoute = options.services
    ? pkiProtocolRoutes(options.services, { maxBodyBytes, logger })
    : () => null;

  const authenticate = async (request: Request): Promise<Principal | null> => {
    if (options.auth.type === 'none') return ANONYMOUS_ADMIN;
    const token = bearerToken(request.headers.get('authorization'));
    if (token === null) return null;
    for (const authenticator of authenticators) {
      const principal = await authenticator(token);
      if (principal) return principal;
    }
    return null;
  };

  const dispatch = async (
    request: Request,
    transport: TransportContext,
    requestId: string,
    matched: { route: string },
  ): Promise<Response> => {
    const url = new URL(request.url);
    const protocol = protocolRoute(url.pathname);
    if (protocol) {
      matched.route = protocol.route;
      return protocol.handler(request, transport);
    }
    let principal: Principal | null = null;
    if (requiresAuthentication(url.pathname)) {
      principal = await authenticate(request);
      if (!principal) {
        return problem({
          status: 401,
          code: 'unauthorized',
          detail: 'a valid API key is required',
          requestId,
          headers: { 'www-authenticate': 'Bearer' },
        });
      }
    }
    const match = router.match(request.method, url.pathname);
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
    const spec = match.spec;
    matched.route = spec.path;
    // An agent key opens only the agent's own routes (heartbeat, work, CSR, job status).
    if (principal?.kind === 'agent' && !AGENT_OPERATION_IDS.has(spec.operationId)) {
      return problem({
        status: 403,
        code: 'forbidden',
        detail: 'agent keys may call only agent routes',
        requestId,
      });
    }
    if (spec.admin && principal?.admin !== true) {
      return problem({
        status: 403,
        code: 'forbidden',
        detail: 'this operation requires an admin',
        requestId,
      });
    }
    const input = {
      params: spec.params ? parsePart(spec.params, match.params, 'path') : match.params,
      query: spec.query ? parsePart(spec.query, queryObject(url.searchParams), 'query') : {},
      body: spec.body ? parsePart(spec.body, await readJsonBody(request, maxBodyBytes), 'body') : undefined,
      request,
      transport,
      principal,
      requestId,
      logger: logger.child({ request_id: requestId }),
    };
    const result = await spec.handle(input);
    return result instanceof Response ? result : jsonResponse(result);
  };

  const handler = async (request: Request, transport: TransportContext): Promise<Response> => {
    const started = performance.now();
    const incoming = request.headers.get('x-request-id');
    const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    const matched = { route: 'unmatched' };
    let response: Response;
    try {
      response = await dispatch(request, transport, requestId, matched);
    } catch (error) {
      response = errorResponse(error, requestId, logger);
    }
    response.headers.set('x-request-id', requestId);
    const event = {
      method: request.method,
      route: matched.route,
      status: response.status,
      durationMs: performance.now() - started,
    };
    options.onResponse?.(event);
    logger.debug({ request_id: requestId, ...event, remote: transport.remoteAddress }, 'request');
    return response;
  };

  return Object.assign(handler, {
    get openapi() {
      return openapi;
    },
    routes,
  });
}

/**
 * Agent keys (`cwa_…`) as principals: the token's SHA-256 is looked up by hash (spec §5.2.4).
 * Retired agents still authenticate so that their heartbeat gets 410 rather than 401.
 */
function agentKeyAuthenticator(services: Services): Authenticator {
  return async (token) => {
    const agent = await services.agents.authenticate(token);
    return agent ? { kind: 'agent', id: agent.id, admin: false } : null;
  };
}

function jsonResponse(result: JsonResult): Response {
  const headers = new Headers(result.headers);
  if (result.body === undefined) return new Response(null, { status: result.status, headers });
  headers.set('content-type', 'application/json');
  return new Response(JSON.stringify(result.body), { status: result.status, headers });
}

function errorResponse(error: unknown, requestId: string, logger: Logger): Response {
  if (isCertwrightError(error)) {
    if (error.code === 'internal' || error.code === 'unavailable') {
      logger.error({ request_id: requestId, err: error }, 'request failed');
    }
    return problemFromError(error, requestId);
  }
  logger.error({ request_id: requestId, err: error }, 'unexpected error');
  return problemFromError(new CertwrightError('internal', 'internal error', { cause: error }), requestId);
}
