import { type AuthUser, DEFAULT_TENANT_ID, type TransportContext } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CSRF_HEADER,
  createHandler,
  csrfTokenFor,
  type ProtocolMount,
  SESSION_COOKIE,
} from '../src/index.js';
import { createTestApp, TEST_API_KEY, type TestApp } from './support/test-app.js';

const UA = 'Mozilla/5.0 (mount test)';
const transport: TransportContext = { remoteAddress: '127.0.0.1' };

/**
 * A protocol mount that is not public authenticates like a REST route and is guarded like one:
 * the permission it names, CSRF for cookie-authenticated changes, agent keys refused. The
 * handler is never reached when refused.
 */
describe('non-public protocol mounts', () => {
  let app: TestApp;
  const reached: string[] = [];
  const mount: ProtocolMount = {
    prefix: '/embedded-admin',
    route: '/embedded-admin/{path}',
    permission: 'admin.est.reload',
    answer: async (request) => {
      reached.push(`${request.method} ${new URL(request.url).pathname}`);
      return new Response('done', { headers: { 'content-type': 'text/plain' } });
    },
  };

  beforeAll(async () => {
    app = await createTestApp({ handler: { protocols: [mount] } });
  }, 180_000);
  afterAll(() => app?.close());

  let counter = 0;
  async function session(roles: string[]): Promise<string> {
    counter += 1;
    const user: AuthUser = await app.storage.users.create({
      tenant_id: DEFAULT_TENANT_ID,
      subject: `mount-user-${counter}`,
      provider_id: null,
    });
    await app.storage.roles.setRolesOf(user.id, roles);
    const { token } = await app.services.sessions.start(user, {
      auth_method: 'breakglass',
      user_agent: UA,
      ip_address: '192.0.2.1',
    });
    return token;
  }
  const send = (method: string, headers: Record<string, string>) =>
    app.handler(new Request('https://localhost:8443/embedded-admin/reload', { method, headers }), transport);
  const cookie = (token: string, csrf: boolean) => ({
    cookie: `${SESSION_COOKIE}=${token}`,
    'user-agent': UA,
    ...(csrf ? { [CSRF_HEADER]: csrfTokenFor(token) } : {}),
  });

  it('refuses a signed-in user without the permission with 403, the handler not reached', async () => {
    for (const role of ['viewer', 'operator', 'auditor']) {
      const token = await session([role]);
      for (const method of ['GET', 'POST']) {
        const refused = await send(method, cookie(token, true));
        expect(refused.status, `${role} ${method}`).toBe(403);
        expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(await refused.json()).toMatchObject({
          status: 403,
          error: 'forbidden',
          detail: 'this operation requires the permission admin.est.reload',
        });
      }
    }
    expect(reached).toEqual([]);
  });

  it('refuses no credentials (401) and an agent key (403)', async () => {
    expect((await send('GET', {})).status).toBe(401);
    const agent = await app.call('POST', '/api/v1/agents', {
      name: 'mount-agent',
      hostname: 'h.example.test',
    });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    const refused = await send('POST', { authorization: `Bearer ${agent.body.api_key}` });
    expect(refused.status).toBe(403);
    expect((await refused.json()).detail).toBe('agent keys may call only agent routes');
    expect(reached).toEqual([]);
  });

  it('needs the CSRF header for a cookie-authenticated change, even with the permission', async () => {
    const token = await session(['admin']);
    const refused = await send('POST', cookie(token, false));
    expect(refused.status).toBe(403);
    expect((await refused.json()).detail).toBe('a cookie-authenticated change needs the X-CSRF-Token header');
    expect(reached).toEqual([]);
    expect((await send('GET', cookie(token, false))).status).toBe(200);
    expect((await send('POST', cookie(token, true))).status).toBe(200);
    expect((await send('POST', { authorization: `Bearer ${TEST_API_KEY}` })).status).toBe(200);
    expect(reached).toEqual([
      'GET /embedded-admin/reload',
      'POST /embedded-admin/reload',
      'POST /embedded-admin/reload',
    ]);
  });

  it('documents the permission in the OpenAPI document of the mount', () => {
    const withOps = createHandler({
      auth: { type: 'api-key', secret: TEST_API_KEY },
      protocols: [
        {
          ...mount,
          operations: {
            '/embedded-admin/reload': {
              post: { operationId: 'embeddedReload', responses: { 200: { description: 'reloaded' } } },
            },
          },
        },
      ],
    });
    const op = (withOps.openapi.paths['/embedded-admin/reload'] as Record<string, Record<string, unknown>>)
      .post!;
    expect(op['x-permission']).toBe('admin.est.reload');
    expect(Object.keys(op.responses as object)).toEqual(expect.arrayContaining(['200', '401', '403']));
  });

  it('refuses at start-up a mount that is neither public nor names a catalogue permission, or is both', () => {
    const build = (m: ProtocolMount) =>
      createHandler({ auth: { type: 'api-key', secret: TEST_API_KEY }, protocols: [m] });
    const { permission: _, ...bare } = mount;
    expect(() => build(bare)).toThrow(
      /must be public or name a permission of the catalogue \(got undefined\)/,
    );
    expect(() => build({ ...mount, permission: 'est.everything' as never })).toThrow(/got est\.everything/);
    expect(() => build({ ...mount, public: { why: 'a protocol of its own', rateLimit: 'public' } })).toThrow(
      /is public and cannot also require admin\.est\.reload/,
    );
  });

  it('keeps every built-in protocol mount public: each authenticates in its own way', () => {
    for (const m of app.handler.protocols.filter((p) => p !== mount)) {
      expect(m.public?.why, m.prefix).toBeTruthy();
      expect(m.permission, m.prefix).toBeUndefined();
    }
  });
});
