import type { Services } from '@certwright/core';
import type { RouteSpec } from '../http/route.js';
import { bulkRoutes } from './bulk.js';
import { certificateRoutes } from './certificates.js';
import { policyRoutes } from './policies.js';
import { referenceDataRoutes } from './reference-data.js';
import { renewalPolicyRoutes } from './renewal-policies.js';

/**
 * Feature routes in registration order. Within each module, literal paths come before
 * overlapping `{param}` paths (e.g. `/agents/retired` before `/agents/{id}`).
 */
export function featureRoutes(services: Services): RouteSpec[] {
  const modules: ((services: Services) => RouteSpec[])[] = [
    // Bulk routes before certificates: `/certificates/bulk-*` must never reach `{id}`.
    bulkRoutes,
    certificateRoutes,
    referenceDataRoutes,
    renewalPolicyRoutes,
    policyRoutes,
  ];
  return modules.flatMap((module) => module(services));
}
