import type { HttpMethod, RouteSpec } from './route.js';

interface CompiledRoute {
  spec: RouteSpec;
  pattern: RegExp;
  names: string[];
}

export type Match =
  | { kind: 'route'; spec: RouteSpec; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allow: string[] }
  | { kind: 'none' };

/**
 * First match in registration order wins, so a literal path such as `/agents/retired`
 * registered before `/agents/{id}` takes precedence, as the spec requires.
 */
export class Router {
  readonly #routes: CompiledRoute[] = [];

  constructor(specs: readonly RouteSpec[]) {
    for (const spec of specs) {
      const names: string[] = [];
      const source = spec.path
        .split('/')
        .map((segment) => {
          const param = /^\{([a-z_][a-z0-9_]*)\}$/i.exec(segment);
          if (!param) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          names.push(param[1] as string);
          return '([^/]+)';
        })
        .join('/');
      this.#routes.push({ spec, pattern: new RegExp(`^${source}$`), names });
    }
  }

  match(method: string, pathname: string): Match {
    const lookup = method === 'HEAD' ? 'GET' : method;
    const allow = new Set<HttpMethod>();
    // The first template that matches the path owns it: `/certificates/bulk-revoke` answers a
    // GET with 405 rather than falling through to `GET /certificates/{id}`.
    let owner: string | undefined;
    for (const route of this.#routes) {
      if (owner !== undefined && route.spec.path !== owner) continue;
      const found = route.pattern.exec(pathname);
      if (!found) continue;
      owner = route.spec.path;
      if (route.spec.method !== lookup) {
        allow.add(route.spec.method);
        continue;
      }
      const params: Record<string, string> = {};
      route.names.forEach((name, i) => {
        params[name] = safeDecode(found[i + 1] as string);
      });
      return { kind: 'route', spec: route.spec, params };
    }
    if (allow.size === 0) return { kind: 'none' };
    if (allow.has('GET')) allow.add('HEAD' as HttpMethod);
    return { kind: 'method_not_allowed', allow: [...allow].sort() };
  }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
