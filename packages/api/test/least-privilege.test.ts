import { readFileSync } from 'node:fs';
import {
  MemoryEphemeralStore,
  PERMISSION_NAMES,
  type Permission,
  permissionsOf,
  type Services,
} from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderPermissionDoc } from '../src/auth/permission-docs.js';
import { type CertwrightHandler, createHandler, type Principal, type RouteSpec } from '../src/index.js';
import { conformance } from './support/openapi-conformance.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Routes that a principal without any admin-family permission (the built-in `operator` role)
 * must never reach: private keys, CA and profile changes, revocation, the audit trail, ACME
 * EAB keys and protocol administration. Bulk renew and bulk reassign stay open to operators.
 */
const ADMIN_FAMILY: readonly Permission[] = [
  'agent.register',
  'agent.retire',
  'notification.create',
  'audit.read',
  'audit.export',
  'cert.revoke',
  'cert.export_key',
  'issuer.write',
  'profile.write',
  'acme.eab.read',
  'acme.eab.write',
  'acme.account.write',
  'admin.est.read',
  'admin.est.reload',
  'admin.scep.read',
  'admin.scep.reload',
  // Webhooks send data to an address their author chooses and may carry tokens: reads included.
  'webhook.read',
  'webhook.write',
  // Scan targets and health checks name destinations inside the network the server connects to.
  'scan.write',
  'healthcheck.write',
  'auth.breakglass.admin',
  'auth.oidc.create',
  'auth.oidc.edit',
  'auth.oidc.delete',
  'auth.user.deactivate',
  'auth.role.assign',
  'system.metrics',
];

/** `lack:<permission>` is a principal holding every permission but that one. */
const LACKING = 'lack:';
/** `only:<permission>` holds exactly that one. */
const ONLY = 'only:';
const OPERATOR_TOKEN = 'operator-session-token';

function principalFor(token: string): Principal | null {
  if (token === OPERATOR_TOKEN) {
    return { kind: 'session', id: 'user-7', permissions: permissionsOf(['operator']) };
  }
  if (token.startsWith(LACKING)) {
    const missing = token.slice(LACKING.length);
    return {
      kind: 'session',
      id: 'user-8',
      permissions: new Set(PERMISSION_NAMES.filter((p) => p !== missing)),
    };
  }
  if (token.startsWith(ONLY)) {
    return { kind: 'session', id: 'user-9', permissions: new Set([token.slice(ONLY.length) as Permission]) };
  }
  return null;
}

/** Services whose every method call, at any depth, is recorded in `calls`. */
function recorded(services: Services): { services: Services; calls: string[] } {
  const calls: string[] = [];
  const cache = new WeakMap<object, object>();
  const wrap = <T extends object>(target: T, path: string): T => {
    const cached = cache.get(target);
    if (cached) return cached as T;
    const proxy = new Proxy(target, {
      get(object, prop) {
        const value = Reflect.get(object, prop, object);
        const name = `${path}.${String(prop)}`;
        if (typeof value === 'function') {
          return (...args: unknown[]) => {
            calls.push(name);
            return value.apply(object, args);
          };
        }
        return value !== null && typeof value === 'object' && !(value instanceof Date)
          ? wrap(value, name)
          : value;
      },
    });
    cache.set(target, proxy);
    return proxy;
  };
  return { services: wrap(services, 'services'), calls };
}

const concretePath = (route: RouteSpec) => route.path.replace(/\{([a-z_]+)\}/g, (_, name) => `walk-${name}`);

describe('principals lacking a permission, walked over every route', { timeout: 60_000 }, () => {
  let app: TestApp;
  let handler: CertwrightHandler;
  let calls: string[];

  beforeAll(async () => {
    app = await createTestApp();
    const spied = recorded(app.services);
    calls = spied.calls;
    handler = createHandler({
      auth: { type: 'api-key', secret: 'walk-admin-key-0123456789' },
      services: spied.services,
      authenticators: [async (token) => principalFor(token)],
      metrics: async () => ({ contentType: 'text/plain', body: '' }),
      // The edge's own rate-limit counters, kept apart so every recorded call is the services'.
      ephemeral: new MemoryEphemeralStore(),
      ...conformance.options(),
    });
  }, 180_000);
  afterAll(() => app.close());

  const callAs = (token: string, route: RouteSpec) => {
    const hasBody = route.body !== undefined;
    return conformance.call(
      handler,
      new Request(`https://localhost:8443${concretePath(route)}`, {
        method: route.method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(hasBody ? { 'content-type': 'application/json' } : {}),
        },
        ...(hasBody ? { body: '{}' } : {}),
      }),
      { remoteAddress: '127.0.0.1' },
    );
  };

  const authenticated = () => handler.routes.filter((route) => route.permission !== null);

  it('names a permission on every route that is not public', () => {
    for (const route of handler.routes) {
      expect(route.public === undefined, `${route.method} ${route.path}`).toBe(route.permission !== null);
    }
    expect(authenticated().length).toBeGreaterThan(80);
  });

  it('refuses each route with 403 to a principal holding everything but its permission, before any service runs', async () => {
    for (const route of authenticated()) {
      calls.length = 0;
      const res = await callAs(`${LACKING}${route.permission}`, route);
      const what = `${route.method} ${route.path} (${route.operationId})`;
      expect(res.status, what).toBe(403);
      expect(await res.json(), what).toMatchObject({
        error: 'forbidden',
        detail: `this operation requires the permission ${route.permission}`,
      });
      expect(calls, what).toEqual([]);
    }
  });

  it('lets a principal holding only the permission past the gate', async () => {
    for (const route of authenticated()) {
      const res = await callAs(`${ONLY}${route.permission}`, route);
      const what = `${route.method} ${route.path} (${route.operationId})`;
      if (res.status === 403) {
        // Only the agent routes refuse past the gate: they take the agent's own key.
        expect(route.permission, what).toBe('agent.self');
      }
    }
  });

  it('keeps the operator role off every admin-family route, and on bulk renew and reassign', async () => {
    const operator = permissionsOf(['operator']);
    expect(ADMIN_FAMILY.filter((p) => operator.has(p))).toEqual([]);
    const refused: string[] = [];
    for (const route of authenticated()) {
      calls.length = 0;
      const res = await callAs(OPERATOR_TOKEN, route);
      const what = `${route.method} ${route.path} (${route.operationId})`;
      if (!operator.has(route.permission as Permission)) {
        expect(res.status, what).toBe(403);
        expect(calls, what).toEqual([]);
        refused.push(route.operationId);
      } else {
        expect(res.status, what).not.toBe(403);
      }
    }
    expect(refused).toEqual(expect.arrayContaining(['bulkRevokeCertificates', 'estBulkRevokeCertificates']));
    const open = handler.routes.filter((r) => r.permission === 'cert.write').map((r) => r.operationId);
    expect(open).toEqual(expect.arrayContaining(['bulkRenewCertificates', 'bulkReassignCertificates']));
  });

  it('lets the admin key through the same gates', async () => {
    const route = handler.routes.find((r) => r.operationId === 'deleteIssuer')!;
    const res = await conformance.call(
      handler,
      new Request(`https://localhost:8443${concretePath(route)}`, {
        method: 'DELETE',
        headers: { authorization: 'Bearer walk-admin-key-0123456789' },
      }),
      { remoteAddress: '127.0.0.1' },
    );
    expect(res.status).toBe(404);
  });
  describe('docs/architecture.md', () => {
    const doc = readFileSync(new URL('../../../docs/architecture.md', import.meta.url), 'utf8');
    const between = (name: string) => {
      const match = new RegExp(`<!-- ${name}:start -->\\n([\\s\\S]*?)<!-- ${name}:end -->`).exec(doc);
      expect(match, `markers ${name} in docs/architecture.md`).not.toBeNull();
      return match![1]!.trim();
    };

    it('docs/auth/permissions.md is what `pnpm docs:auth` generates from the route table', () => {
      const page = readFileSync(new URL('../../../docs/auth/permissions.md', import.meta.url), 'utf8');
      expect(renderPermissionDoc(page, handler.routes)).toBe(page);
    });

    it('lists exactly the public routes and protocol mounts, with their reasons and rate-limit classes', () => {
      const rows = [
        ...handler.routes
          .filter((r) => r.public)
          .map((r) => `| \`${r.method} ${r.path}\` | ${r.public!.why} | ${r.public!.rateLimit} |`),
        ...handler.protocols
          .filter((m) => m.public)
          .map((m) => `| \`${m.prefix}/…\` | ${m.public!.why} | ${m.public!.rateLimit} |`),
      ];
      expect(between('public-routes')).toBe(
        ['| route | why | rate limit |', '|---|---|---|', ...rows].join('\n'),
      );
    });
  });
});
