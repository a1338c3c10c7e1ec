import {
  type DirectPath,
  type Handler,
  MemoryEphemeralStore,
  readBodyBytes,
  silentLogger,
} from '@certwright/core';
import { type ProtocolMount, ProtocolMounts, toWebResponse } from '@certwright/protocols/mount';
import { appRoutes } from './app-routes.js';
import type { HandlerOptions } from './handler-options.js';
import { socketClientAddress } from './http/client-address.js';
import { DEFAULT_RATE_LIMITS, RateLimiter } from './http/rate-limit.js';
import type { RouteSpec } from './http/route.js';
import { Router } from './http/router.js';
import { buildOpenApiDocument, type OpenApiDocument } from './openapi/document.js';
import { authenticator } from './pipeline/authenticate.js';
import { directEntry } from './pipeline/direct-entry.js';
import { exchanger } from './pipeline/exchange.js';
import { publicRateLimit } from './pipeline/rate-limit.js';
import { reporter } from './pipeline/report.js';
import { protocolSteps } from './pipeline/serve-protocol.js';
import { routeSteps } from './pipeline/serve-route.js';
import { createProtocolServers, type ProtocolServers } from './protocols/servers.js';
import { protocolMounts } from './protocols/table.js';

export type { HandlerOptions } from './handler-options.js';
export { type ResponseEvent, responseEventOf } from './pipeline/report.js';

export interface CertwrightHandler extends Handler {
  readonly openapi: OpenApiDocument;
  readonly routes: readonly RouteSpec[];
  readonly protocols: readonly ProtocolMount[];
  /** The enrollment protocol servers behind the built-in mounts (with `services` only). */
  readonly servers?: ProtocolServers;
  /** The public protocol mounts' direct entry (OCSP, SCEP, ACME), for hosts that use it; same steps as the handler. */
  readonly direct: DirectPath;
}

/**
 * Composes every REST route and protocol mount into one Web-standard handler and its direct
 * entry, over the steps in pipeline/ (docs/architecture.md, "The request pipeline"). Nothing
 * answers without authentication unless its own definition declares `public` (with the
 * reason); public routes spend a per-client rate limit instead.
 */
export function createHandler(options: HandlerOptions): CertwrightHandler {
  const logger = options.logger ?? silentLogger;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const { services } = options;
  const clientAddress = options.clientAddress ?? socketClientAddress;
  const servers = services
    ? createProtocolServers(services, { acme: options.acme, est: options.est, scep: options.scep })
    : undefined;
  let openapi: OpenApiDocument;
  const routes = appRoutes({ options, services, servers, clientAddress, logger, openapi: () => openapi });
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

  const limiter = new RateLimiter(
    options.ephemeral ?? services?.deps.ephemeral ?? new MemoryEphemeralStore(),
    { ...DEFAULT_RATE_LIMITS, ...options.rateLimits },
    logger,
  );
  const rateLimit = publicRateLimit(limiter, clientAddress);
  const authenticate = authenticator({
    auth: options.auth,
    authenticators: options.authenticators,
    services,
    limiter,
    clientAddress,
  });
  const serveProtocol = protocolSteps(rateLimit, authenticate);
  const serveRoute = routeSteps({
    router: new Router(routes),
    rateLimit,
    authenticate,
    maxBodyBytes,
    logger,
  });
  const exchange = exchanger(reporter({ clientAddress, onResponse: options.onResponse, logger }), logger);

  const handler: Handler = (request, transport) =>
    exchange(
      request,
      transport,
      (requestId, outcome) => {
        const url = new URL(request.url);
        const mount = mounts.match(url.pathname);
        const readBody = (maxBytes: number) => readBodyBytes(request, maxBytes);
        return mount
          ? serveProtocol(mount, request, readBody, transport, requestId, outcome)
          : serveRoute(request, url, transport, requestId, outcome);
      },
      toWebResponse,
    );

  return Object.assign(handler, {
    get openapi() {
      return openapi;
    },
    routes,
    protocols: mounts.all,
    ...(servers ? { servers } : {}),
    direct: directEntry(mounts, exchange, serveProtocol),
  });
}
