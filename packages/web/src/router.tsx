import {
  createRootRoute,
  createRoute,
  createRouter,
  lazyRouteComponent,
  Outlet,
} from '@tanstack/react-router';
import { Shell } from './components/shell';
import { inventoryQuery } from './inventory-query';
import {
  instant,
  parseHealthCheckSearch,
  parseJobSearch,
  parseNotificationSearch,
  parseViolationSearch,
} from './list-search';
import { queryClient } from './query-client';

// Every page is its own chunk (src/pages/<name>.tsx, default export), loaded on first visit.
const page = (load: () => Promise<{ default: React.ComponentType }>) => lazyRouteComponent(load);

const rootRoute = createRootRoute({ component: Outlet });

export interface SignInSearch {
  error?: string;
  reason?: string;
}
const signInRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/login',
  validateSearch: (search: Record<string, unknown>): SignInSearch => ({
    ...(typeof search.error === 'string' ? { error: search.error } : {}),
    ...(typeof search.reason === 'string' ? { reason: search.reason } : {}),
  }),
  component: page(() => import('./pages/sign-in')),
});

const appRoute = createRoute({ getParentRoute: () => rootRoute, id: 'app', component: Shell });

const dashboardRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/',
  component: page(() => import('./pages/dashboard')),
});

export const CERT_STATUSES = [
  'Pending',
  'Active',
  'Expiring',
  'Expired',
  'RenewalInProgress',
  'Failed',
  'Revoked',
  'Archived',
] as const;
export type CertStatus = (typeof CERT_STATUSES)[number];
export const CERT_SORTS = [
  'name',
  'common_name',
  'status',
  'expires_at',
  'created_at',
  'updated_at',
] as const;

export interface InventorySearch {
  page?: number;
  search?: string;
  status?: CertStatus[];
  owner_id?: string;
  issuer_id?: string;
  team_id?: string;
  environment?: string;
  /** Latest version expires at or after / strictly before (ISO instants; the dashboard's bins). */
  expires_after?: string;
  expires_before?: string;
  sort?: (typeof CERT_SORTS)[number];
  order?: 'asc' | 'desc';
  /** The columns shown, in order (components/inventory-columns.tsx). */
  cols?: string;
}

/** Inventory filters live in the URL: only known keys and values survive. */
export function parseInventorySearch(search: Record<string, unknown>): InventorySearch {
  const out: InventorySearch = {};
  const page = Number(search.page);
  if (Number.isInteger(page) && page > 1) out.page = page;
  for (const key of ['search', 'owner_id', 'issuer_id', 'team_id', 'environment', 'cols'] as const) {
    const value = search[key];
    if (typeof value === 'string' && value.trim() !== '') out[key] = value.slice(0, 200);
  }
  const statuses = (
    Array.isArray(search.status)
      ? search.status
      : typeof search.status === 'string'
        ? search.status.split(',')
        : []
  ).filter((s): s is CertStatus => (CERT_STATUSES as readonly unknown[]).includes(s));
  if (statuses.length > 0) out.status = [...new Set(statuses)];
  for (const key of ['expires_after', 'expires_before'] as const) {
    const value = instant(search[key]);
    if (value) out[key] = value;
  }
  if ((CERT_SORTS as readonly unknown[]).includes(search.sort))
    out.sort = search.sort as InventorySearch['sort'];
  if (search.order === 'asc' || search.order === 'desc') out.order = search.order;
  return out;
}

const inventoryRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/certificates',
  validateSearch: parseInventorySearch,
  // Not awaited: the list request starts now, the page renders it when it arrives.
  loaderDeps: ({ search }) => search,
  loader: ({ deps }) => {
    void queryClient.prefetchQuery(inventoryQuery(deps));
  },
  component: page(() => import('./pages/certificates')),
});

const certificateRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/certificates/$id',
  component: page(() => import('./pages/certificate')),
});

const issuerRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/issuers/$id',
  component: page(() => import('./pages/issuer')),
});

const notificationsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/alerts/notifications',
  component: page(() => import('./pages/webhooks')),
});

const webhookSecurityRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/settings/webhook-security',
  component: page(() => import('./pages/webhook-security')),
});

const auditRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/audit',
  component: page(() => import('./pages/audit')),
});

const agentsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/agents',
  component: page(() => import('./pages/agents')),
});

const targetsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/targets',
  component: page(() => import('./pages/targets')),
});

const jobsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/jobs',
  validateSearch: parseJobSearch,
  component: page(() => import('./pages/jobs')),
});

const notificationListRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/notifications',
  validateSearch: parseNotificationSearch,
  component: page(() => import('./pages/notifications')),
});

const policiesRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/policies',
  component: page(() => import('./pages/policies')),
});

const violationsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/policies/violations',
  validateSearch: parseViolationSearch,
  component: page(() => import('./pages/violations')),
});

const renewalPoliciesRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/renewal-policies',
  component: page(() => import('./pages/renewal-policies')),
});

const profilesRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/profiles',
  component: page(() => import('./pages/profiles')),
});

const issuersRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/issuers',
  component: page(() => import('./pages/issuers')),
});

const acmeEabRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/acme-eab-keys',
  component: page(() => import('./pages/acme-eab')),
});

const acmeAccountsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/acme-accounts',
  component: page(() => import('./pages/acme-accounts')),
});

const usersRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/people/users',
  component: page(() => import('./pages/users')),
});

const sessionsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/people/sessions',
  component: page(() => import('./pages/sessions')),
});

const oidcProvidersRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/people/oidc-providers',
  component: page(() => import('./pages/oidc-providers')),
});

const groupMappingsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/people/group-mappings',
  component: page(() => import('./pages/group-mappings')),
});

const breakglassRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/people/breakglass',
  component: page(() => import('./pages/breakglass')),
});

const ownersRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/owners',
  component: page(() => import('./pages/owners')),
});

const teamsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/teams',
  component: page(() => import('./pages/teams')),
});

const scanTargetsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/discovery/targets',
  component: page(() => import('./pages/scan-targets')),
});

const discoveryRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/discovery',
  component: page(() => import('./pages/discovery')),
});

const discoveredRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/discovery/certificates/$id',
  component: page(() => import('./pages/discovered-certificate')),
});

const healthChecksRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/health-checks',
  validateSearch: parseHealthCheckSearch,
  component: page(() => import('./pages/health-checks')),
});

const healthCheckRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/health-checks/$id',
  component: page(() => import('./pages/health-check')),
});

const estAdminRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/enrollment/est',
  component: page(() => import('./pages/est-admin')),
});

const scepAdminRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/enrollment/scep',
  component: page(() => import('./pages/scep-admin')),
});

// Any other address renders inside the shell (navigation, a way home), not on a blank page.
const notFoundRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '$',
  component: page(() => import('./pages/not-found')),
});

const routeTree = rootRoute.addChildren([
  signInRoute,
  appRoute.addChildren([
    dashboardRoute,
    inventoryRoute,
    certificateRoute,
    notificationsRoute,
    webhookSecurityRoute,
    auditRoute,
    ownersRoute,
    teamsRoute,
    agentsRoute,
    targetsRoute,
    jobsRoute,
    notificationListRoute,
    policiesRoute,
    violationsRoute,
    renewalPoliciesRoute,
    profilesRoute,
    issuersRoute,
    issuerRoute,
    acmeEabRoute,
    acmeAccountsRoute,
    usersRoute,
    sessionsRoute,
    oidcProvidersRoute,
    groupMappingsRoute,
    breakglassRoute,
    scanTargetsRoute,
    discoveryRoute,
    discoveredRoute,
    healthChecksRoute,
    healthCheckRoute,
    estAdminRoute,
    scepAdminRoute,
    notFoundRoute,
  ]),
]);

export const router = createRouter({ routeTree, defaultPreload: 'intent' });
export { certificateRoute, inventoryRoute, signInRoute };

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}
