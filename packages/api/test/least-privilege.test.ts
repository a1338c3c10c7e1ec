import { readFileSync } from 'node:fs';
import { MemoryEphemeralStore, type Services } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CertwrightHandler, createHandler, type Principal, type RouteSpec } from '../src/index.js';
import { conformance } from './support/openapi-conformance.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Until a permission model exists, a principal without the admin flag (an embedder's own
 * users, say) may not release private keys, import CA keys, change issuers, profiles or
 * targets, or revoke — singly or in bulk. Bulk renew and bulk reassign stay open (spec §4.3).
 */
const ADMIN_ONLY = [
  'registerAgent',
  'retireAgent',
  'createNotification',
  'exportAudit',
  'verifyAuditChain',
  'getAuditHead',
  'listAudit',
  'bulkRevokeCertificates',
  'estBulkRevokeCertificates',
  'revokeCertificate',
  'exportCertificatePkcs12',
  'createIssuer',
  'updateIssuer',
  'deleteIssuer',
  'createProfile',
  'updateProfile',
  'deleteProfile',
  'createTarget',
  'updateTarget',
  'deleteTarget',
  // ACME external account binding keys are credentials: every route, reads included.
  'listAcmeEabKeys',
  'createAcmeEabKey',
  'getAcmeEabKey',
  'deleteAcmeEabKey',
  'estAdminProfiles',
  'estAdminReloadTrust',
  'scepAdminProfiles',
  'scepMdmStats',
  'scepMdmReloadTrust',
];

const MEMBER_TOKEN = 'member-session-token';
const member: Principal = Object.freeze({ kind: 'session', id: 'user-7', admin: false });

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

describe('a non-admin principal, walked over every route', { timeout: 60_000 }, () => {
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
      authenticators: [async (token) => (token === MEMBER_TOKEN ? member : null)],
      // The edge's own rate-limit counters, kept apart so every recorded call is the services'.
      ephemeral: new MemoryEphemeralStore(),
      ...conformance.options(),
    });
  }, 180_000);
  afterAll(() => app.close());

  const callAsMember = (route: RouteSpec) => {
    const hasBody = route.body !== undefined;
    return conformance.call(
      handler,
      new Request(`https://localhost:8443${concretePath(route)}`, {
        method: route.method,
        headers: {
          authorization: `Bearer ${MEMBER_TOKEN}`,
          ...(hasBody ? { 'content-type': 'application/json' } : {}),
        },
        ...(hasBody ? { body: '{}' } : {}),
      }),
      { remoteAddress: '127.0.0.1' },
    );
  };

  it('is refused with 403 on every admin route before any service runs, and never elsewhere', async () => {
    const refused: string[] = [];
    for (const route of handler.routes) {
      calls.length = 0;
      const res = await callAsMember(route);
      const what = `${route.method} ${route.path} (${route.operationId})`;
      if (route.admin) {
        expect(res.status, what).toBe(403);
        expect(await res.json(), what).toMatchObject({ error: 'forbidden' });
        expect(calls, what).toEqual([]);
        refused.push(route.operationId);
      } else {
        expect(res.status, what).not.toBe(403);
      }
    }
    expect(refused.sort()).toEqual([...ADMIN_ONLY].sort());
  });

  it('keeps bulk renew and bulk reassign open, as the spec requires', () => {
    const open = handler.routes.filter((r) => !r.admin).map((r) => r.operationId);
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

    it('lists exactly the admin-only routes of the route table', () => {
      const rows = handler.routes
        .filter((r) => r.admin)
        .map((r) => `| \`${r.method} ${r.path}\` | ${r.operationId} |`);
      expect(between('admin-routes')).toBe(['| route | operation |', '|---|---|', ...rows].join('\n'));
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
