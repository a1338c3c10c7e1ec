import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Principal } from '../auth/principal.js';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { checkAccessDeclaration, permissionRefusal } from './permission.js';

const reader: Principal = { kind: 'session', id: 'u1', permissions: new Set(['cert.read']) };

const route = (access: Partial<RouteSpec>): RouteSpec =>
  defineRoute({
    method: 'GET',
    path: '/x',
    operationId: 'x',
    summary: 'x',
    tags: [],
    permission: null,
    responses: { 200: { description: 'ok', schema: z.object({}) } },
    handle: async () => ({ status: 200 }),
    ...access,
  } as RouteSpec);

describe('permissionRefusal', () => {
  it('refuses with 403 naming the permission a principal lacks, and lets a holder through', async () => {
    const refused = permissionRefusal(reader, 'cert.write', 'req-5');
    expect(refused?.status).toBe(403);
    expect(await refused?.json()).toMatchObject({
      detail: 'this operation requires the permission cert.write',
      request_id: 'req-5',
    });
    expect(permissionRefusal(reader, 'cert.read', 'req')).toBeUndefined();
    expect(
      permissionRefusal({ kind: 'api-key', id: 'k', permissions: 'all' }, 'system.read', 'req'),
    ).toBeUndefined();
  });

  it('refuses a missing principal', () => {
    expect(permissionRefusal(null, 'cert.read', 'req')?.status).toBe(403);
  });
});

describe('checkAccessDeclaration', () => {
  it('takes a public route without a permission and a private one naming a catalogue permission', () => {
    expect(() =>
      checkAccessDeclaration(route({ public: { why: 'probe', rateLimit: 'public' } })),
    ).not.toThrow();
    expect(() => checkAccessDeclaration(route({ permission: 'cert.read' }))).not.toThrow();
  });

  it('refuses at start-up a route that is neither, both, or names no catalogue permission', () => {
    expect(() => checkAccessDeclaration(route({}))).toThrow(/must name a permission of the catalogue/);
    expect(() =>
      checkAccessDeclaration(
        route({ public: { why: 'probe', rateLimit: 'public' }, permission: 'cert.read' }),
      ),
    ).toThrow(/is public and cannot also require cert.read/);
    expect(() => checkAccessDeclaration(route({ permission: 'no.such' as never }))).toThrow(/got no.such/);
  });
});
