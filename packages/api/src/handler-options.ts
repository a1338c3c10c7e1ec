import type { EphemeralStore, Logger, Services } from '@certwright/core';
import type { OutboundClient } from '@certwright/core/net';
import type { ProtocolMount } from '@certwright/protocols/mount';
import type { OidcSettings } from './auth/oidc.js';
import type { Authenticator, AuthSettings } from './auth/principal.js';
import type { ClientAddressResolver } from './http/client-address.js';
import type { RateLimitSettings } from './http/rate-limit.js';
import type { RouteSpec } from './http/route.js';
import type { ResponseEvent } from './pipeline/report.js';
import type { AcmeMountOptions, ProtocolServerOptions } from './protocols/servers.js';
import type { ReadinessCheck, VersionInfo } from './routes/system.js';

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
  /** Per-client limits; omitted fields keep `DEFAULT_RATE_LIMITS`. */
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
