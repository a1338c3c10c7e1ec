import { BUILT_IN_ROLES, PERMISSION_NAMES, PERMISSIONS } from '@certwright/core';
import type { RouteSpec } from '../http/route.js';

/**
 * The generated parts of docs/auth/permissions.md, keyed by their marker name. The page keeps
 * them between `<!-- name:start -->` and `<!-- name:end -->`; `pnpm docs:auth` rewrites them and a
 * test fails while the page differs from the route definitions.
 */
export function permissionDocSections(routes: readonly RouteSpec[]): Record<string, string> {
  const routeRows = routes
    .filter((route) => route.permission !== null)
    .map((route) => `| \`${route.method} ${route.path}\` | ${route.operationId} | \`${route.permission}\` |`);
  const catalogueRows = PERMISSION_NAMES.map((name) => {
    const holders = BUILT_IN_ROLES.filter((role) => role.permissions.includes(name)).map((role) => role.name);
    return `| \`${name}\` | ${PERMISSIONS[name]} | ${holders.join(', ') || '—'} |`;
  });
  const roleRows = BUILT_IN_ROLES.map((role) => `| \`${role.name}\` | ${role.description} |`);
  return {
    'route-permissions': ['| route | operation | permission |', '|---|---|---|', ...routeRows].join('\n'),
    'permission-catalogue': [
      '| permission | grants | built-in roles |',
      '|---|---|---|',
      ...catalogueRows,
    ].join('\n'),
    'built-in-roles': ['| role | meaning |', '|---|---|', ...roleRows].join('\n'),
  };
}

/** The page with every generated section replaced; throws when a marker pair is missing. */
export function renderPermissionDoc(page: string, routes: readonly RouteSpec[]): string {
  let out = page;
  for (const [name, body] of Object.entries(permissionDocSections(routes))) {
    const pattern = new RegExp(`(<!-- ${name}:start -->\\n)[\\s\\S]*?(<!-- ${name}:end -->)`);
    if (!pattern.test(out)) throw new Error(`the page lacks the markers <!-- ${name}:start/end -->`);
    out = out.replace(pattern, (_, start: string, end: string) => `${start}${body}\n${end}`);
  }
  return out;
}
