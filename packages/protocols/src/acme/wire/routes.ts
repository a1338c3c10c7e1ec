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

const splitPath = (path: string) => path.split('/');

/** The route for a method and the path segments below the profile's base. */
export function matchRoute(
  routes: readonly AcmeRoute[],
  method: string,
  segments: readonly string[],
): RouteMatch {
  const allow = new Set<string>();
  for (const route of routes) {
    const pattern = splitPath(route.path);
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
