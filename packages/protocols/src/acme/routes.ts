import { account, accountOrders } from './account.js';
import { authorization } from './authorization.js';
import { certificate, certificateIssuer } from './certificate.js';
import { challenge } from './challenge.js';
import type { AcmeEndpoint } from './context.js';
import { directory } from './directory.js';
import { finalize } from './finalize.js';
import { keyChange } from './key-change.js';
import { newAccount } from './new-account.js';
import { newNonce } from './new-nonce.js';
import { newOrder } from './new-order.js';
import { order } from './order.js';
import { renewalInfo } from './renewal-info.js';
import { revokeCert } from './revoke-cert.js';

/**
 * Every ACME route under a profile's base (`/acme` or `/acme/profile/{path_id}`), one line
 * each. `path` segments starting with `:` are parameters handed to the endpoint. A GET route
 * answers HEAD too, without a body; a path known under other methods answers 405 with `Allow`.
 */
export interface AcmeRoute {
  method: 'GET' | 'HEAD' | 'POST';
  path: string;
  endpoint: AcmeEndpoint;
}

export const ACME_ROUTES: readonly AcmeRoute[] = [
  { method: 'GET', path: 'directory', endpoint: directory },
  { method: 'HEAD', path: 'new-nonce', endpoint: newNonce },
  { method: 'GET', path: 'new-nonce', endpoint: newNonce },
  { method: 'POST', path: 'new-account', endpoint: newAccount },
  { method: 'POST', path: 'account/:id', endpoint: account },
  { method: 'POST', path: 'account/:id/orders', endpoint: accountOrders },
  { method: 'POST', path: 'key-change', endpoint: keyChange },
  { method: 'POST', path: 'new-order', endpoint: newOrder },
  { method: 'POST', path: 'order/:id', endpoint: order },
  { method: 'POST', path: 'order/:id/finalize', endpoint: finalize },
  { method: 'POST', path: 'authz/:id', endpoint: authorization },
  { method: 'POST', path: 'challenge/:id', endpoint: challenge },
  { method: 'POST', path: 'cert/:id', endpoint: certificate },
  { method: 'POST', path: 'cert/:id/issuer', endpoint: certificateIssuer },
  { method: 'POST', path: 'revoke-cert', endpoint: revokeCert },
  { method: 'GET', path: 'renewal-info/:certId', endpoint: renewalInfo },
];

export type RouteMatch =
  | { kind: 'route'; route: AcmeRoute; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allow: string[] }
  | { kind: 'none' };

/** A route's path split once: its segments, each a literal or (`:name`) a parameter's name. */
interface CompiledRoute {
  route: AcmeRoute;
  literals: readonly (string | undefined)[];
  names: readonly (string | undefined)[];
  methods: readonly string[];
}

/** Routes compiled per list (the handler's list lives as long as the handler). */
const compiledLists = new WeakMap<readonly AcmeRoute[], readonly CompiledRoute[]>();

function compiled(routes: readonly AcmeRoute[]): readonly CompiledRoute[] {
  let list = compiledLists.get(routes);
  if (!list) {
    list = routes.map((route) => {
      const parts = route.path.split('/');
      return {
        route,
        literals: parts.map((p) => (p.startsWith(':') ? undefined : p)),
        names: parts.map((p) => (p.startsWith(':') ? p.slice(1) : undefined)),
        methods: route.method === 'GET' ? ['GET', 'HEAD'] : [route.method],
      };
    });
    compiledLists.set(routes, list);
  }
  return list;
}

/**
 * The route for a method and the path segments below the profile's base. The routes' paths are
 * split once per list, not on every call (the direct entry asks three times per request).
 */
export function matchRoute(
  routes: readonly AcmeRoute[],
  method: string,
  segments: readonly string[],
): RouteMatch {
  let allow: Set<string> | undefined;
  for (const candidate of compiled(routes)) {
    const { literals, names } = candidate;
    if (literals.length !== segments.length) continue;
    let matched = true;
    for (let i = 0; i < literals.length; i++) {
      const literal = literals[i];
      const segment = segments[i]!;
      if (literal === undefined ? segment === '' || segment.length > 256 : literal !== segment) {
        matched = false;
        break;
      }
    }
    if (!matched) continue;
    if (candidate.methods.includes(method)) {
      const params: Record<string, string> = {};
      for (let i = 0; i < names.length; i++) {
        const name = names[i];
        if (name !== undefined) params[name] = segments[i]!;
      }
      return { kind: 'route', route: candidate.route, params };
    }
    allow ??= new Set();
    for (const m of candidate.methods) allow.add(m);
  }
  return allow ? { kind: 'method_not_allowed', allow: [...allow] } : { kind: 'none' };
}
