import type { Services } from '@certwright/core';
import type { RouteSpec } from '../http/route.js';
import type { ProtocolServers } from '../protocols/servers.js';
import { acmeAccountRoutes } from './acme-accounts.js';
import { acmeEabRoutes } from './acme-eab.js';
import { agentRoutes } from './agents.js';
import { auditRoutes } from './audit.js';
import { authGroupMappingRoutes } from './auth-group-mappings.js';
import { authPeopleRoutes } from './auth-people.js';
import { authSessionRoutes } from './auth-sessions.js';
import { bulkRoutes } from './bulk.js';
import { certificateDetailsRoutes } from './certificate-details.js';
import { certificateRoutes } from './certificates.js';
import { crlPublicationRoutes } from './crl-publication.js';
import { dashboardRoutes } from './dashboard.js';
import { discoveryRoutes } from './discovery.js';
import { estAdminRoutes } from './est-admin.js';
import { healthCheckRoutes } from './health-checks.js';
import { issuerRoutes } from './issuers.js';
import { jobRoutes } from './jobs.js';
import { lifecycleRoutes } from './lifecycle.js';
import { nameRoutes } from './names.js';
import { networkScanRoutes } from './network-scan.js';
import { notificationRoutes } from './notifications.js';
import { ownerRoutes } from './owners.js';
import { policyRoutes } from './policies.js';
import { profileRoutes } from './profiles.js';
import { renewalPolicyRoutes } from './renewal-policies.js';
import { scepAdminRoutes } from './scep-admin.js';
import { scepMdmAdminRoutes } from './scep-mdm-admin.js';
import { targetRoutes } from './targets.js';
import { teamRoutes } from './teams.js';
import { webhookRoutes } from './webhooks.js';

/**
 * Feature routes in registration order. Within each module, literal paths come before
 * overlapping `{param}` paths (e.g. `/agents/retired` before `/agents/{id}`).
 */
export function featureRoutes(services: Services, servers: ProtocolServers): RouteSpec[] {
  const modules: ((services: Services, servers: ProtocolServers) => RouteSpec[])[] = [
    agentRoutes,
    targetRoutes,
    jobRoutes,
    notificationRoutes,
    dashboardRoutes,
    webhookRoutes,
    auditRoutes,
    // Bulk routes before certificates: `/certificates/bulk-*` must never reach `{id}`.
    bulkRoutes,
    certificateRoutes,
    lifecycleRoutes,
    certificateDetailsRoutes,
    nameRoutes,
    ownerRoutes,
    teamRoutes,
    issuerRoutes,
    crlPublicationRoutes,
    profileRoutes,
    renewalPolicyRoutes,
    policyRoutes,
    acmeEabRoutes,
    acmeAccountRoutes,
    estAdminRoutes,
    networkScanRoutes,
    scepAdminRoutes,
    discoveryRoutes,
    healthCheckRoutes,
    authPeopleRoutes,
    authSessionRoutes,
    authGroupMappingRoutes,
    scepMdmAdminRoutes,
  ];
  return modules.flatMap((module) => module(services, servers));
}
