import { isPermission, type Permission } from '@certwright/core';
import { holds, type Principal } from '../auth/principal.js';
import { problem } from '../http/problem.js';
import type { RouteSpec } from '../http/route.js';

/** The 403 for a principal that lacks the permission; nothing has run. */
export function permissionRefusal(
  principal: Principal | null,
  permission: Permission,
  requestId: string,
): Response | undefined {
  if (holds(principal, permission)) return undefined;
  return problem({
    status: 403,
    code: 'forbidden',
    detail: `this operation requires the permission ${permission}`,
    requestId,
  });
}

/**
 * A route is either public (no principal, so no permission) or names the permission it needs:
 * a definition that is neither, or both, is a programming error caught at start-up.
 */
export function checkAccessDeclaration(route: RouteSpec): void {
  const what = `${route.method} ${route.path}`;
  if (route.public && route.permission !== null) {
    throw new TypeError(`${what} is public and cannot also require ${route.permission}`);
  }
  if (!route.public && (route.permission === null || !isPermission(route.permission))) {
    throw new TypeError(`${what} must name a permission of the catalogue (got ${String(route.permission)})`);
  }
}
