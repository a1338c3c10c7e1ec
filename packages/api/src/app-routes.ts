import type { Logger, Services } from '@certwright/core';
import { createAdministratorClient } from '@certwright/core/net';
import { OidcRelyingParty } from './auth/oidc.js';
import type { HandlerOptions } from './handler-options.js';
import type { ClientAddressResolver } from './http/client-address.js';
import type { RouteSpec } from './http/route.js';
import type { OpenApiDocument } from './openapi/document.js';
import { checkAccessDeclaration } from './pipeline/permission.js';
import type { ProtocolServers } from './protocols/servers.js';
import { authBreakglassRoutes } from './routes/auth-breakglass.js';
import { authOidcRoutes } from './routes/auth-oidc.js';
import { authRuntimeRoutes } from './routes/auth-runtime.js';
import { authSelfRoutes } from './routes/auth-self.js';
import { featureRoutes } from './routes/index.js';
import { systemRoutes } from './routes/system.js';

export interface AppRoutesContext {
  options: HandlerOptions;
  /** With `servers`: every feature route; without, the system routes and the embedder's own. */
  services?: Services;
  servers?: ProtocolServers;
  clientAddress: ClientAddressResolver;
  logger: Logger;
  /** The API document, built after the routes (it describes them). */
  openapi: () => OpenApiDocument;
}

/**
 * Every REST route in registration order (the first match wins): system, features, sign-in
 * and the auth runtime, then the embedder's. Each declaration is checked at start-up.
 */
export function appRoutes({
  options,
  services,
  servers,
  clientAddress,
  logger,
  openapi,
}: AppRoutesContext): RouteSpec[] {
  const routes: RouteSpec[] = systemRoutes({
    authType: options.auth.type,
    version: options.version ?? {},
    readiness: options.readiness,
    metrics: options.metrics,
    openapi,
  });
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
  return routes;
}
