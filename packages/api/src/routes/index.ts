import type { Services } from '@certwright/core';
import type { RouteSpec } from '../http/route.js';
import { agentRoutes } from './agents.js';
import { auditRoutes } from './audit.js';
import { bulkRoutes } from './bulk.js';
import { certificateRoutes } from './certificates.js';
import { jobRoutes } from './jobs.js';
import { lifecycleRoutes } from './lifecycle.js';
import { notificationRoutes } from './notifications.js';
import { policyRoutes } from './policies.js';
import { referenceDataRoutes } from './reference-data.js';
import { renewalPolicyRoutes } from './renewal-policies.js';
import { targetRoutes } from './targets.js';

/**
 * Feature routes in registration order. Within each module, literal paths come before
 * overlapping `{param}` paths (e.g. `/agents/retired` before `/agents/{id}`).
 */
export function featureRoutes(services: Services): RouteSpec[] {
  const modules: ((services: Services) => RouteSpec[])[] = [
    agentRoutes,
    targetRoutes,
    jobRoutes,
    notificationRoutes,
    auditRoutes,
    // Bulk routes before certificates: `/certificates/bulk-*` must never reach `{id}`.
    bulkRoutes,
    certificateRoutes,
    lifecycleRoutes,
    referenceDataRoutes,
    renewalPolicyRoutes,
    policyRoutes,
  ];
  return modules.flatMap((module) => module(services));
}
