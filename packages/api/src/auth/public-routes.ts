/**
 * Spec §5.3: the routes that answer without an API key. Protocol and browser-flow routes
 * authenticate in their own way (JWS, HTTP Basic, mTLS, challenge passwords, cookies).
 * This table is the only place that decides it.
 */
export const PUBLIC_ROUTES: readonly { path: string; prefix?: true; why: string }[] = [
  { path: '/health', why: 'liveness probe' },
  { path: '/ready', why: 'readiness probe' },
  { path: '/api/v1/auth/info', why: 'clients discover the auth type before they hold a key' },
  { path: '/api/v1/version', why: 'build information' },
  { path: '/.well-known/pki/', prefix: true, why: 'CRL and OCSP for relying parties' },
  { path: '/.well-known/est/', prefix: true, why: 'EST: HTTP Basic, mTLS, channel binding' },
  { path: '/.well-known/est-mtls/', prefix: true, why: 'EST over mutual TLS' },
  { path: '/scep', why: 'SCEP: challenge password' },
  { path: '/scep/', prefix: true, why: 'SCEP per profile' },
  { path: '/scep-mtls', why: 'SCEP over mutual TLS' },
  { path: '/scep-mtls/', prefix: true, why: 'SCEP over mutual TLS per profile' },
  { path: '/acme/', prefix: true, why: 'ACME: JWS signed by the account key' },
  { path: '/auth/', prefix: true, why: 'browser sign-in flows (OIDC, break-glass, logout)' },
  { path: '/docs/api', why: 'human-readable API reference' },
];

/** Paths under these prefixes require an API key unless PUBLIC_ROUTES lists them. */
export const PROTECTED_PREFIXES: readonly string[] = ['/api/', '/metrics'];

export function isPublicPath(pathname: string): boolean {
  return PUBLIC_ROUTES.some((r) => (r.prefix ? pathname.startsWith(r.path) : pathname === r.path));
}

export function requiresAuthentication(pathname: string): boolean {
  return !isPublicPath(pathname) && PROTECTED_PREFIXES.some((p) => pathname.startsWith(p));
}
