import type { PublicAccess, RouteSpec } from './route.js';

interface CompiledRoute {
  spec: RouteSpec;
  pattern: RegExp;
  names: string[];
}

export type Match =
  | { kind: 'route'; spec: RouteSpec; params: Record<string, string> }
  /** `public` is set when every route of the path is public, so the 405 needs no key either. */
  | { kind: 'method_not_allowed'; allow: string[]; public?: PublicAccess }
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
    const allow = new Set<string>();
    const owners: RouteSpec[] = [];
    // The first template that matches the path owns it: `/certificates/bulk-revoke` answers a
    // GET with 405 rather than falling through to `GET /certificates/{id}`.
    let owner: string | undefined;
    for (const route of this.#routes) {
      if (owner !== undefined && route.spec.path !== owner) continue;
      const found = route.pattern.exec(pathname);
      if (!found) continue;
      owner = route.spec.path;
      owners.push(route.spec);
      const answersHead = route.spec.method === 'GET' && route.spec.head !== false;
      if (route.spec.method !== method && !(method === 'HEAD' && answersHead)) {
        allow.add(route.spec.method);
        if (answersHead) allow.add('HEAD');
        continue;
      }
      const params: Record<string, string> = {};
      route.names.forEach((name, i) => {
        params[name] = safeDecode(found[i + 1] as string);
      });
      return { kind: 'route', spec: route.spec, params };
    }
    if (allow.size === 0) return { kind: 'none' };
    const access = owners.every((spec) => spec.public) ? owners[0]?.public : undefined;
    return { kind: 'method_not_allowed', allow: [...allow].sort(), ...(access ? { public: access } : {}) };
  }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
