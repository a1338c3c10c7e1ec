import { describe, expect, it } from 'vitest';
import { ACME_ROUTES, type AcmeRoute, matchRoute, type RouteMatch } from './routes.js';

/** The plain reading of the route table: each path split and compared anew. */
function reference(routes: readonly AcmeRoute[], method: string, segments: readonly string[]): RouteMatch {
  const allow = new Set<string>();
  for (const route of routes) {
    const pattern = route.path.split('/');
    if (pattern.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let matched = true;
    for (let i = 0; i < pattern.length && matched; i++) {
      const part = pattern[i]!;
      const segment = segments[i]!;
      if (part.startsWith(':')) {
        if (segment === '' || segment.length > 256) matched = false;
        else params[part.slice(1)] = segment;
      } else if (part !== segment) matched = false;
    }
    if (!matched) continue;
    const methods = route.method === 'GET' ? ['GET', 'HEAD'] : [route.method];
    if (methods.includes(method)) return { kind: 'route', route, params };
    for (const m of methods) allow.add(m);
  }
  return allow.size > 0 ? { kind: 'method_not_allowed', allow: [...allow] } : { kind: 'none' };
}

describe('ACME routes', () => {
  it('match every method and path as the route table reads', () => {
    const extra: AcmeRoute[] = [{ method: 'POST', path: 'directory', endpoint: ACME_ROUTES[0]!.endpoint }];
    const paths = [
      ...ACME_ROUTES.map((r) => r.path.replace(/:[A-Za-z]+/g, 'x1')),
      'order/ord_1/finalize',
      'order//finalize',
      `order/${'a'.repeat(256)}`,
      `order/${'a'.repeat(257)}`,
      'authz/',
      'cert/c1/issuer/extra',
      'unknown',
      '',
    ];
    for (const routes of [ACME_ROUTES, [...ACME_ROUTES, ...extra]])
      for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'])
        for (const path of paths) {
          const segments = path.split('/');
          expect(matchRoute(routes, method, segments), `${method} ${path}`).toEqual(
            reference(routes, method, segments),
          );
        }
  });
});
