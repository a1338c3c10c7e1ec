import type { Services } from '@certwright/core';
import type { RouteSpec } from '../http/route.js';
import { agentRoutes } from './agents.js';
import { auditRoutes } from './audit.js';
import { jobRoutes } from './jobs.js';
import { notificationRoutes } from './notifications.js';
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
  ];
  return modules.flatMap((module) => module(services));
}
