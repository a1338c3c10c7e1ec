import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, httpsCall } from './support/https.js';
import { makeTestPki } from './support/openssl-pki.js';
import { type ServerProcess, startServerProcess } from './support/server-process.js';

const SECRET = 'people-test-secret-0123456789';
const UA = 'Mozilla/5.0 (operator laptop)';
const PASSWORD = 'break the glass, carefully';

describe('people through the running server', () => {
  const pki = makeTestPki(['server']);
  let server: ServerProcess;
  let ca: Buffer;

  beforeAll(async () => {
    ca = readFileSync(pki.ca);
    server = await startServerProcess({
      SVC_TLS_CERT_PATH: pki.issued.server!.cert,
      SVC_TLS_KEY_PATH: pki.issued.server!.key,
      SVC_AUTH_SECRET: SECRET,
      SVC_BREAKGLASS_ENABLED: 'true',
      SVC_BOOTSTRAP_ADMIN_SUBJECT: 'root',
    });
  }, 180_000);
  afterAll(() => {
    server?.child.kill('SIGKILL');
  });

  const call = (path: string, options: Parameters<typeof httpsCall>[3] = {}) =>
    httpsCall(server.port, ca, path, options);

  it('lets an operator in with break-glass while the identity provider is down', async () => {
    // An identity provider nobody answers for: sign-in through it fails with a reason, nothing else.
    const provider = await call('/api/v1/auth/oidc/providers', {
      method: 'POST',
      headers: bearer(SECRET),
      body: {
        id: 'down',
        name: 'Down IdP',
        issuer: 'https://127.0.0.1:9/',
        client_id: 'cw',
        redirect_uri: `https://localhost:${server.port}/auth/oidc/callback`,
      },
    });
    expect(provider.status).toBe(201);
    const sso = await call('/auth/oidc/login?provider=down', { headers: { 'user-agent': UA } });
    expect(sso.status).toBe(302);
    expect(sso.headers.location).toBe('/login?error=oidc_failed&reason=provider_unavailable');

    // The bootstrap administrator exists with the admin role; give them a break-glass password.
    const users = await call('/api/v1/auth/users', { headers: bearer(SECRET) });
    const root = users.json.data.find((u: { subject: string }) => u.subject === 'root');
    expect(root).toBeDefined();
    expect(
      (await call(`/api/v1/auth/users/${root.id}/roles`, { headers: bearer(SECRET) })).json.roles,
    ).toEqual(['admin']);
    const set = await call('/api/v1/auth/breakglass/credentials', {
      method: 'POST',
      headers: bearer(SECRET),
      body: { actor_id: 'root', password: PASSWORD },
    });
    expect(set.status).toBe(200);

    const login = await call('/auth/breakglass/login', {
      method: 'POST',
      headers: { 'user-agent': UA },
      body: { actor_id: 'root', password: PASSWORD },
    });
    expect(login.status).toBe(204);
    const cookies = [login.headers['set-cookie'] ?? []].flat().map((c) => c.split(';')[0]!);
    const cookie = cookies.join('; ');
    const csrf = cookies.find((c) => c.startsWith('__Host-cw_csrf='))!.split('=')[1]!;
    const browser = { cookie, 'user-agent': UA };

    expect((await call('/api/v1/issuers', { headers: browser })).status).toBe(200);
    const self = await call(`/api/v1/auth/users/${root.id}`, {
      method: 'DELETE',
      headers: { ...browser, 'x-csrf-token': csrf },
    });
    expect(self.status).toBe(409);
    const sessions = await call('/api/v1/auth/sessions', { headers: browser });
    expect(sessions.json.data[0]).toMatchObject({ auth_method: 'breakglass', current: true });

    expect((await call('/auth/logout', { method: 'POST', headers: browser })).status).toBe(204);
    expect((await call('/api/v1/issuers', { headers: browser })).status).toBe(401);
  });
});
