import type { Services } from '@certwright/core';
import type { RouteSpec } from '../http/route.js';

/**
 * Feature routes in registration order. Within each module, literal paths come before
 * overlapping `{param}` paths (e.g. `/agents/retired` before `/agents/{id}`).
 */
export function featureRoutes(services: Services): RouteSpec[] {
  const modules: ((services: Services) => RouteSpec[])[] = [];
  return modules.flatMap((module) => module(services));
}
