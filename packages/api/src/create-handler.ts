import { randomUUID } from 'node:crypto';
import {
  CertwrightError,
  type DirectPath,
  type EphemeralStore,
  type Handler,
  isCertwrightError,
  isPermission,
  type Logger,
  MemoryEphemeralStore,
  type Permission,
  type PlainResponse,
  pathnameOf,
  type RequestHead,
  readBodyBytes,
  type Services,
  silentLogger,
  type TransportContext,
  withFixedLength,
} from '@certwright/core';
import { createAdministratorClient, type OutboundClient } from '@certwright/core/net';
import { type ProtocolMount, ProtocolMounts, tooManyRequestsText } from '@certwright/protocols/mount';
import { OidcRelyingParty, type OidcSettings } from './auth/oidc.js';
import {
  ANONYMOUS_ADMIN,
  type Authenticator,
  type AuthSettings,
  apiKeyAuthenticator,
  bearerToken,
  holds,
  type Principal,
} from './auth/principal.js';
import { csrfMatches, sessionTokenOf } from './auth/session-cookie.js';
import { type ClientAddressResolver, clientKey, socketClientAddress } from './http/client-address.js';
import { problem, problemFromError } from './http/problem.js';
import { DEFAULT_RATE_LIMITS, RateLimiter, type RateLimitSettings } from './http/rate-limit.js';
import type { JsonResult, PublicAccess, RouteSpec } from './http/route.js';
import { Router } from './http/router.js';
import { isJsonMediaType, parseJsonBody, parsePart, queryObject } from './http/validate.js';
import { buildOpenApiDocument, type OpenApiDocument } from './openapi/document.js';
import {
  type AcmeMountOptions,
  createProtocolServers,
  type ProtocolServerOptions,
  type ProtocolServers,
} from './protocols/servers.js';
import { protocolMounts } from './protocols/table.js';
import { AGENT_OPERATION_IDS } from './routes/agents.js';
import { authBreakglassRoutes } from './routes/auth-breakglass.js';
import { authOidcRoutes } from './routes/auth-oidc.js';
import { authRuntimeRoutes } from './routes/auth-runtime.js';
import { authSelfRoutes } from './routes/auth-self.js';
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
  /**
   * An embedder's own REST routes, served after the feature routes in the order given. Like
   * every route they require authentication unless their definition declares `public`.
   */
  routes?: readonly RouteSpec[];
  /** The ACME server's settings: default profile, external base URL, renewal information. */
  acme?: AcmeMountOptions;
  /** EST: default profile of the root routes, per-principal rate limit, trust bundle reader. */
  est?: ProtocolServerOptions['est'];
  /** SCEP: default profile of the root routes, device-management verifier and challenges. */
  scep?: ProtocolServerOptions['scep'];
  /** An embedder's own wire-protocol mounts, dispatched by prefix like CRL and OCSP. */
  protocols?: readonly ProtocolMount[];
  /** Per-client limits; omitted fields keep {@link DEFAULT_RATE_LIMITS}. */
  rateLimits?: Partial<RateLimitSettings>;
  /**
   * Where rate-limit counters live; share one store (Redis) between instances. Default: the
   * services' ephemeral store, or an in-process one without services.
   */
  ephemeral?: EphemeralStore;
  /** Who a request comes from, for per-client limits; default: the socket's peer address. */
  clientAddress?: ClientAddressResolver;
  /** OIDC sign-in: identity-provider connections, their trust anchors and the flow's settings. */
  oidc?: { outbound?: OutboundClient; ca?: string | readonly string[]; settings?: Partial<OidcSettings> };
  /** Facts the auth runtime-config route reports that only the host knows. */
  runtime?: { trustedProxies?: readonly string[]; demoSeeded?: boolean; demoModeAck?: boolean };
  /** Called once per request, after the response is built (metrics, access logs). */
  onResponse?: (event: ResponseEvent) => void;
}

export interface ResponseEvent {
  method: string;
  /** Route template (`/api/v1/agents/{id}`), or `unmatched`; never the raw path. */
  route: string;
  /** The OpenAPI operation answered, when the request reached one. */
  operationId?: string;
  status: number;
  durationMs: number;
  requestId: string;
  /** The client was over a rate limit: the answer is the 429, nothing ran. */
  rateLimited?: true;
  /** Who the request authenticated as; absent for public routes and refused requests. */
  principal?: { kind: Principal['kind']; id: string };
  /** The client address as the per-client limits see it (the trusted-proxy header's, if any). */
  client: string;
}

/** The event of each answer this module produced, for a host that logs it once the bytes are out. */
const reported = new WeakMap<object, ResponseEvent>();

/**
 * The {@link ResponseEvent} of an answer a certwright handler (Web or direct entry) returned:
 * route template, request id, principal. A host's access log reads it after writing the answer,
 * when it knows the bytes sent; undefined for answers produced elsewhere (static files).
 */
export function responseEventOf(answer: Response | PlainResponse): ResponseEvent | undefined {
  return reported.get(answer);
}

export interface CertwrightHandler extends Handler {
  readonly openapi: OpenApiDocument;
  readonly routes: readonly RouteSpec[];
  readonly protocols: readonly ProtocolMount[];
  /** The enrollment protocol servers behind the built-in mounts (with `services` only). */
  readonly servers?: ProtocolServers;
  /** The protocol mounts' direct entries (OCSP, SCEP, ACME), for hosts that use them; same rules as the handler. */
  readonly direct: DirectPath;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

interface Outcome {
  route: string;
  operationId?: string;
  rateLimited?: true;
  /** A protocol mount answered: its answer goes out with a Content-Length, never chunked. */
  protocol?: true;
  principal?: Principal;
}

/**
 * Composes every REST route and protocol mount into one Web-standard handler. Nothing answers
 * without authentication unless its own definition declares `public` (with the reason); public
 * routes spend a per-client rate limit instead.
 */
export function createHandler(options: HandlerOptions): CertwrightHandler {
  const logger = options.logger ?? silentLogger;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const services = options.services;
  const authenticators: Authenticator[] = [
    ...(options.auth.type === 'api-key' ? [apiKeyAuthenticator(options.auth.secret)] : []),
    ...(options.authenticators ?? []),
    ...(services ? [agentKeyAuthenticator(services)] : []),
  ];
  let openapi: OpenApiDocument;
  const routes: RouteSpec[] = systemRoutes({
    authType: options.auth.type,
    version: options.version ?? {},
    readiness: options.readiness,
    metrics: options.metrics,
    openapi: () => openapi,
  });
  const clientAddress = options.clientAddress ?? socketClientAddress;
  const servers = services
    ? createProtocolServers(services, { acme: options.acme, est: options.est, scep: options.scep })
    : undefined;
  if (services && servers) {
    routes.push(...featureRoutes(services, servers));
    const rp = new OidcRelyingParty({
      services,
      // Identity providers are destinations administrators chose, often on private networks.
      outbound: options.oidc?.outbound ?? createAdministratorClient(),
      ...(options.oidc?.ca ? { ca: options.oidc.ca } : {}),
      ...(options.oidc?.settings ? { settings: options.oidc.settings } : {}),
      logger,
    });
    routes.push(...authOidcRoutes(services, rp, clientAddress));
    routes.push(...authBreakglassRoutes(services, clientAddress));
    routes.push(...authSelfRoutes(services, options.auth.type));
    routes.push(
      ...authRuntimeRoutes(services, {
        authType: options.auth.type,
        oidc: rp.settings,
        trustedProxies: options.runtime?.trustedProxies ?? [],
        demo: {
          seeded: options.runtime?.demoSeeded ?? false,
          modeAcknowledged: options.runtime?.demoModeAck ?? false,
        },
      }),
    );
  }
  routes.push(...(options.routes ?? []));
  for (const route of routes) checkAccessDeclaration(route);
  const mounts = new ProtocolMounts([
    ...(services && servers
      ? protocolMounts({
          services,
          servers,
          maxBodyBytes,
          logger,
          acme: options.acme,
          clientAddress: options.clientAddress,
        })
      : []),
    ...(options.protocols ?? []),
  ]);
  openapi = buildOpenApiDocument(routes, mounts.all, { version: options.version?.version ?? '3.0.0' });
  const router = new Router(routes);
  const limiter = new RateLimiter(
    options.ephemeral ?? services?.deps.ephemeral ?? new MemoryEphemeralStore(),
    { ...DEFAULT_RATE_LIMITS, ...options.rateLimits },
    logger,
  );

  /**
   * The principal of a session cookie (sent only when no Authorization header is): the user's
   * permissions now, so a role change or deactivation applies to the next request.
   */
  const sessionPrincipal = async (request: Request): Promise<Principal | null> => {
    const token = services ? sessionTokenOf(request) : null;
    if (!services || token === null) return null;
    const active = await services.sessions.resolve(token, { user_agent: request.headers.get('user-agent') });
    if (!active) return null;
    return {
      kind: 'session',
      id: active.user.id,
      permissions: active.permissions,
      sessionId: active.session.id,
      tenantId: active.session.tenant_id,
      viaCookie: true,
    };
  };

  /** A principal; null for no or wrong credentials (counted against the client); a number: locked out for that many seconds. */
  const authenticate = async (request: Request, client: string): Promise<Principal | null | number> => {
    if (options.auth.type === 'none') return ANONYMOUS_ADMIN;
    const header = request.headers.get('authorization');
    if (header === null) {
      if (sessionTokenOf(request) === null) return null;
      const locked = await limiter.authLockedOut(client);
      if (!locked.allowed) return locked.retryAfterSeconds;
      const principal = await sessionPrincipal(request);
      if (!principal) await limiter.authFailed(client);
      return principal;
    }
    const locked = await limiter.authLockedOut(client);
    if (!locked.allowed) return locked.retryAfterSeconds;
    const token = bearerToken(header);
    for (const authenticator of token === null ? [] : authenticators) {
      const principal = await authenticator(token as string);
      if (principal) return principal;
    }
    await limiter.authFailed(client);
    return null;
  };

  /**
   * Spends the client's rate limit of a public route; the seconds to wait when it is exhausted.
   * A class whose limit is off costs nothing: no client address, no store, no promise.
   */
  const spendPublic = (
    access: PublicAccess,
    request: RequestHead,
    transport: TransportContext,
    outcome: Outcome,
  ): Promise<number | undefined> | undefined => {
    if (!limiter.counts(access.rateLimit)) return undefined;
    const client = clientKey(clientAddress(request, transport));
    return limiter.request(access.rateLimit, outcome.route, client).then((verdict) => {
      if (verdict.allowed) return undefined;
      outcome.rateLimited = true;
      return verdict.retryAfterSeconds;
    });
  };

  /**
   * Public: spends the client's rate limit (principal null). Otherwise authenticates: a
   * principal, or the 401 / 429 to answer.
   */
  const admit = async (
    access: PublicAccess | undefined,
    request: Request,
    transport: TransportContext,
    requestId: string,
    outcome: Outcome,
  ): Promise<{ principal: Principal | null } | { refused: Response } | { limited: number }> => {
    if (access) {
      const limited = await spendPublic(access, request, transport, outcome);
      return limited === undefined ? { principal: null } : { limited };
    }
    const client = clientKey(clientAddress(request, transport));
    const principal = await authenticate(request, client);
    if (typeof principal === 'number') {
      outcome.rateLimited = true;
      return { refused: tooManyRequests(requestId, principal, 'too many failed API keys from this client') };
    }
    if (principal) {
      outcome.principal = principal;
      return { principal };
    }
    return {
      refused: problem({
        status: 401,
        code: 'unauthorized',
        detail: 'a valid API key is required',
        requestId,
        headers: { 'www-authenticate': 'Bearer' },
      }),
    };
  };

  const dispatchProtocol = async (
    mount: ProtocolMount,
    request: Request,
    transport: TransportContext,
    requestId: string,
    outcome: Outcome,
  ): Promise<Response> => {
    outcome.route = mount.route;
    outcome.protocol = true;
    const operationId = mount.operationOf?.(request);
    if (operationId) outcome.operationId = operationId;
    const admitted = await admit(mount.public, request, transport, requestId, outcome);
    if ('limited' in admitted)
      return await (mount.rateLimited ?? tooManyRequestsText)(admitted.limited, request);
    if ('refused' in admitted) return admitted.refused;
    const { principal } = admitted;
    if (principal?.kind === 'agent') return agentForbidden(requestId);
    if (!mount.public) {
      // Authenticated like a REST route, so guarded like one: CSRF for cookies, then the permission.
      const refused =
        csrfRefusal(principal, request, requestId) ??
        permissionRefusal(principal, mount.permission!, requestId);
      if (refused) return refused;
    }
    return mount.handler(request, transport);
  };

  const dispatch = async (
    request: Request,
    transport: TransportContext,
    requestId: string,
    outcome: Outcome,
  ): Promise<Response> => {
    const url = new URL(request.url);
    const mount = mounts.match(url.pathname);
    if (mount) return dispatchProtocol(mount, request, transport, requestId, outcome);

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
    const admitted = await admit(access, request, transport, requestId, outcome);
    if ('limited' in admitted) {
      return tooManyRequests(requestId, admitted.limited, 'too many requests from this client');
    }
    if ('refused' in admitted) return admitted.refused;
    const { principal } = admitted;
    // Unknown paths are answered only after authentication: no route map for strangers.
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
    const csrf = csrfRefusal(principal, request, requestId);
    if (csrf) return csrf;
    // An agent key opens only the agent's own routes (heartbeat, work, CSR, job status).
    if (principal?.kind === 'agent' && !AGENT_OPERATION_IDS.has(spec.operationId)) {
      return agentForbidden(requestId);
    }
    if (spec.permission !== null) {
      const refused = permissionRefusal(principal, spec.permission, requestId);
      if (refused) return refused;
    }
    const contentType = request.headers.get('content-type');
    const ownMediaType =
      spec.readsBody === 'any' ||
      (spec.readsBody !== undefined &&
        contentType !== null &&
        spec.readsBody.includes(contentType.split(';')[0]!.trim().toLowerCase()));
    if (
      STATE_CHANGING.has(spec.method) &&
      contentType !== null &&
      !ownMediaType &&
      !isJsonMediaType(contentType)
    ) {
      return unsupportedMediaType(requestId);
    }
    const params = spec.params ? parsePart(spec.params, match.params, 'path') : match.params;
    const query = spec.query ? parsePart(spec.query, queryObject(url.searchParams), 'query') : {};
    let body: unknown;
    if (spec.body) {
      const bytes = await readBodyBytes(request, maxBodyBytes);
      // A body without a type could be anything, e.g. a cross-site fetch of a typeless Blob.
      if (bytes.byteLength > 0 && contentType === null) return unsupportedMediaType(requestId);
      body = parsePart(spec.body, parseJsonBody(bytes), 'body');
    }
    const input = {
      params,
      query,
      body,
      request,
      transport,
      principal,
      requestId,
      logger: logger.child({ request_id: requestId }),
    };
    const result = await spec.handle(input);
    return result instanceof Response ? result : jsonResponse(result);
  };

  const requestIdOf = (request: RequestHead): string => {
    const incoming = request.headers.get('x-request-id');
    return incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
  };

  /** Metrics and the access log line, once per answered request, whichever entry answered it. */
  const report = (
    request: RequestHead,
    transport: TransportContext,
    started: number,
    requestId: string,
    outcome: Outcome,
    answer: Response | PlainResponse,
  ): void => {
    const { principal } = outcome;
    const event: ResponseEvent = {
      method: request.method,
      route: outcome.route,
      ...(outcome.operationId ? { operationId: outcome.operationId } : {}),
      status: answer.status,
      durationMs: performance.now() - started,
      requestId,
      ...(outcome.rateLimited ? { rateLimited: true as const } : {}),
      ...(principal ? { principal: { kind: principal.kind, id: principal.id } } : {}),
      client: clientAddress(request, transport),
    };
    reported.set(answer, event);
    options.onResponse?.(event);
    logger.debug({ request_id: requestId, ...event, remote: transport.remoteAddress }, 'request');
  };

  const handler = async (request: Request, transport: TransportContext): Promise<Response> => {
    const started = performance.now();
    const requestId = requestIdOf(request);
    const outcome: Outcome = { route: 'unmatched' };
    let response: Response;
    try {
      response = await dispatch(request, transport, requestId, outcome);
    } catch (error) {
      response = errorResponse(error, requestId, logger);
    }
    // EST, SCEP, OCSP, CRL and ACME clients get fixed-length answers on every host, the
    // refusals of this dispatcher (rate limit, errors) included (docs/architecture.md).
    if (outcome.protocol) response = await withFixedLength(response, request.method);
    // REST answers (JSON, problem JSON, the reference page) are never to be sniffed into
    // something a browser would render or run.
    else response.headers.set('x-content-type-options', 'nosniff');
    response.headers.set('x-request-id', requestId);
    report(request, transport, started, requestId, outcome, response);
    return response;
  };

  /**
   * The direct entry: only public mounts that offer one, and only the requests their `prepare`
   * takes. The steps are those of dispatchProtocol for a public mount (route, operation, rate
   * limit, the mount's over-limit answer), then the same request id and report as the handler.
   */
  const direct: DirectPath = {
    bodyLimit(method, pathname) {
      const mount = mounts.match(pathname);
      return mount?.public && mount.direct ? mount.direct.bodyLimit(method, pathname) : undefined;
    },
    async answer(request, body, transport) {
      const pathname = pathnameOf(request);
      const mount = mounts.match(pathname);
      if (!mount?.public || !mount.direct) return undefined;
      const produce = mount.direct.prepare(request, body, pathname, transport);
      if (!produce) return undefined;
      const started = performance.now();
      const requestId = requestIdOf(request);
      const outcome: Outcome = { route: mount.route };
      const operationId = mount.operationOf?.(request);
      if (operationId) outcome.operationId = operationId;
      let answer: PlainResponse | Response;
      try {
        const spending = spendPublic(mount.public, request, transport, outcome);
        const limited = spending === undefined ? undefined : await spending;
        answer =
          limited === undefined
            ? await produce()
            : await (mount.rateLimited ?? tooManyRequestsText)(limited, request);
      } catch (error) {
        answer = errorResponse(error, requestId, logger);
      }
      if (answer instanceof Response) {
        answer = await withFixedLength(answer, request.method);
        answer.headers.set('x-request-id', requestId);
      } else {
        answer = { ...answer, headers: { ...answer.headers, 'x-request-id': requestId } };
      }
      report(request, transport, started, requestId, outcome, answer);
      return answer;
    },
  };

  return Object.assign(handler, {
    get openapi() {
      return openapi;
    },
    routes,
    protocols: mounts.all,
    ...(servers ? { servers } : {}),
    direct,
  });
}

/**
 * Agent keys (`cwa_…`) as principals: the token's SHA-256 is looked up by hash.
 * Retired agents still authenticate so that their heartbeat gets 410 rather than 401.
 */
function agentKeyAuthenticator(services: Services): Authenticator {
  return async (token) => {
    const agent = await services.agents.authenticate(token);
    return agent ? { kind: 'agent', id: agent.id, permissions: AGENT_PERMISSIONS } : null;
  };
}

const AGENT_PERMISSIONS: ReadonlySet<Permission> = Object.freeze(new Set<Permission>(['agent.self']));

/**
 * A route is either public (no principal, so no permission) or names the permission it needs:
 * a definition that is neither, or both, is a programming error caught at start-up.
 */
function checkAccessDeclaration(route: RouteSpec): void {
  const what = `${route.method} ${route.path}`;
  if (route.public && route.permission !== null) {
    throw new TypeError(`${what} is public and cannot also require ${route.permission}`);
  }
  if (!route.public && (route.permission === null || !isPermission(route.permission))) {
    throw new TypeError(`${what} must name a permission of the catalogue (got ${String(route.permission)})`);
  }
}

/**
 * A browser sends cookies on cross-site requests too; only the web client can echo the CSRF
 * cookie back in a header. A cookie-authenticated change without it is a 403.
 */
function csrfRefusal(principal: Principal | null, request: Request, requestId: string): Response | undefined {
  if (!principal?.viaCookie || !STATE_CHANGING.has(request.method)) return undefined;
  const token = sessionTokenOf(request);
  if (token !== null && csrfMatches(request, token)) return undefined;
  return problem({
    status: 403,
    code: 'forbidden',
    detail: 'a cookie-authenticated change needs the X-CSRF-Token header',
    requestId,
  });
}

/** The 403 for a principal that lacks the permission; nothing has run. */
function permissionRefusal(
  principal: Principal | null,
  permission: Permission,
  requestId: string,
): Response | undefined {
  if (holds(principal, permission)) return undefined;
  return problem({
    status: 403,
    code: 'forbidden',
    detail: `this operation requires the permission ${permission}`,
    requestId,
  });
}

function agentForbidden(requestId: string): Response {
  return problem({
    status: 403,
    code: 'forbidden',
    detail: 'agent keys may call only agent routes',
    requestId,
  });
}

function tooManyRequests(requestId: string, retryAfterSeconds: number, detail: string): Response {
  return problem({
    status: 429,
    code: 'rate_limited',
    detail: `${detail}; retry after ${retryAfterSeconds} s`,
    requestId,
    headers: { 'retry-after': String(retryAfterSeconds) },
  });
}

function unsupportedMediaType(requestId: string): Response {
  return problem({
    status: 415,
    code: 'unsupported_media_type',
    detail: 'the body must be application/json',
    requestId,
  });
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
