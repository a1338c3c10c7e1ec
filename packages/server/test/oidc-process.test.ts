import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE } from '@certwright/api';
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieBrowser, httpsCall as urlCall } from '../../api/test/support/https-browser.js';
import { createTempDatabase, postgresSkipReason } from '../../storage-pg/test/helpers.js';
import { bearer, httpsCall } from './support/https.js';
import { makeTestPki } from './support/openssl-pki.js';
import { LOOPBACK_ENTRY, type ServerProcess, startServerProcess } from './support/server-process.js';

const SECRET = 'oidc-process-secret-0123456789';
const CLIENT_ID = 'certwright-process-rp';
const CLIENT_SECRET = 'process-rp-secret-0123456789abcdefghij';
const PASSWORD = 'the glass is broken, sign in';
const UA = 'Mozilla/5.0 (certwright process test)';

const skip = await postgresSkipReason();
if (skip) console.warn(`skipping the OIDC server-process test: ${skip}`);

/**
 * The reference server as a process, trusting an identity provider (oidc-provider) whose TLS
 * certificate chains to a private CA named by SVC_OIDC_CA_BUNDLE_PATH. A second process shares
 * its PostgreSQL database (and nothing else), and has no bundle.
 */
describe.skipIf(skip !== undefined)('OIDC, sessions and break-glass through the server process', () => {
  const serverPki = makeTestPki(['server']);
  // The identity provider's own private CA: nothing else trusts it.
  const idpPki = makeTestPki(['idp']);
  const serverCa = readFileSync(serverPki.ca);
  const browserCa = [readFileSync(serverPki.ca, 'utf8'), readFileSync(idpPki.ca, 'utf8')];
  const actor = `ops-${randomBytes(4).toString('hex')}`;
  let database: Awaited<ReturnType<typeof createTempDatabase>>;
  let a: ServerProcess;
  let b: ServerProcess;
  let idpServer: Server;
  let issuer: string;
  let rpBase: string;
  let certificateId: string;

  const api = (server: ServerProcess, method: string, path: string, body?: unknown) =>
    httpsCall(server.port, serverCa, path, {
      method,
      headers: bearer(SECRET),
      ...(body !== undefined ? { body } : {}),
    });

  beforeAll(async () => {
    database = await createTempDatabase();
    idpServer = createHttpsServer({
      cert: readFileSync(idpPki.issued.idp!.cert),
      key: readFileSync(idpPki.issued.idp!.key),
      minVersion: 'TLSv1.2',
    });
    await new Promise<void>((r) => idpServer.listen(0, '127.0.0.1', r));
    issuer = `https://127.0.0.1:${(idpServer.address() as AddressInfo).port}`;
    const env = {
      SVC_TLS_CERT_PATH: serverPki.issued.server!.cert,
      SVC_TLS_KEY_PATH: serverPki.issued.server!.key,
      SVC_AUTH_SECRET: SECRET,
      // The one thing the two processes share: no Redis, so the lockout must hold in the database.
      SVC_DATABASE_URL: database.url,
      SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      SVC_BREAKGLASS_ENABLED: 'true',
      SVC_BREAKGLASS_LOCKOUT_THRESHOLD: '3',
    };
    // Started one after the other: the first migrates the database.
    // The identity provider listens on 127.0.0.1: both run the entry with the test-only loopback opt-in.
    a = await startServerProcess({ ...env, SVC_OIDC_CA_BUNDLE_PATH: idpPki.ca }, LOOPBACK_ENTRY);
    b = await startServerProcess(env, LOOPBACK_ENTRY);
    rpBase = `https://127.0.0.1:${a.port}`;
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: CLIENT_ID,
          client_secret: CLIENT_SECRET,
          redirect_uris: [`${rpBase}/auth/oidc/callback`],
          grant_types: ['authorization_code'],
          response_types: ['code'],
          backchannel_logout_uri: `${rpBase}/auth/oidc/back-channel-logout`,
          backchannel_logout_session_required: true,
        },
      ],
      jwks: {
        keys: [
          {
            ...(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
              format: 'jwk',
            }) as Record<string, unknown>),
            kid: 'process-k1',
            use: 'sig',
            alg: 'RS256',
          },
        ],
      },
      conformIdTokenClaims: false,
      claims: { openid: ['sub'], email: ['email'], groups: ['groups'] },
      scopes: ['openid', 'email', 'groups'],
      features: {
        devInteractions: { enabled: false },
        backchannelLogout: { enabled: true },
        rpInitiatedLogout: {
          enabled: true,
          logoutSource: async (ctx: { body: string }, form: string) => {
            ctx.body = `<html><body>${form}</body></html>`;
          },
        },
      },
      pkce: { required: () => true },
      cookies: { keys: [randomBytes(16).toString('hex')] },
      findAccount: async (_ctx: unknown, id: string) => ({
        accountId: id,
        claims: async () => ({ sub: id, email: `${id}@example.test`, groups: ['pki-viewers'] }),
      }),
      // Logout tokens go to the server process over TLS, verified against its CA.
      fetch: async (url: string | URL, init: RequestInit) => {
        const res = await urlCall(browserCa[0]!, String(url), {
          method: init.method ?? 'POST',
          headers: Object.fromEntries(new Headers(init.headers).entries()),
          body: typeof init.body === 'string' ? init.body : init.body?.toString(),
        });
        return new Response(res.body || null, { status: res.status });
      },
    } as never);
    // The sign-in page: whoever comes is "carol", consenting to every scope asked.
    idpServer.on('request', async (req, res) => {
      if (!req.url?.startsWith('/interaction/')) return provider.callback()(req, res);
      const details = await provider.interactionDetails(req, res);
      if (details.prompt.name === 'login') {
        await provider.interactionFinished(req, res, { login: { accountId: 'carol' } }, {});
        return;
      }
      const grant = new provider.Grant({ accountId: details.session!.accountId, clientId: CLIENT_ID });
      grant.addOIDCScope('openid email groups');
      await provider.interactionFinished(
        req,
        res,
        { consent: { grantId: await grant.save() } },
        { mergeWithLastSubmission: true },
      );
    });

    const created = await api(a, 'POST', '/api/v1/auth/oidc/providers', {
      id: 'corp',
      name: 'Corp IdP on a private CA',
      issuer,
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      scopes: ['openid', 'email', 'groups'],
      redirect_uri: `${rpBase}/auth/oidc/callback`,
      post_login_url: '/welcome',
    });
    expect(created.status, created.body).toBe(201);
    const mapping = await api(a, 'POST', '/api/v1/auth/oidc/group-mappings', {
      provider_id: 'corp',
      group: 'pki-viewers',
      role: 'viewer',
    });
    expect(mapping.status, mapping.body).toBe(201);
    // One certificate in the inventory, for the viewer to see and fail to revoke.
    const owner = await api(a, 'POST', '/api/v1/owners', { name: 'Owner', email: 'owner@example.test' });
    const team = await api(a, 'POST', '/api/v1/teams', { name: 'Team' });
    const ca = await api(a, 'POST', '/api/v1/issuers', { name: 'Process test CA', type: 'Local' });
    expect(ca.status, ca.body).toBe(201);
    const cert = await api(a, 'POST', '/api/v1/certificates', {
      name: 'web',
      common_name: 'web.example.test',
      sans: ['web.example.test'],
      renewal_policy_id: 'rp-default',
      issuer_id: ca.json.id,
      owner_id: owner.json.id,
      team_id: team.json.id,
    });
    expect(cert.status, cert.body).toBe(201);
    certificateId = cert.json.id;
  }, 400_000);

  afterAll(async () => {
    for (const server of [a, b]) server?.child.kill('SIGTERM');
    await Promise.all([a, b].map((s) => s?.exited));
    idpServer?.closeAllConnections();
    await new Promise((r) => idpServer?.close(r));
    await database?.drop();
  }, 60_000);

  it('signs in through the provider on a private CA; the group-mapped viewer lists but cannot revoke', async () => {
    const browser = new CookieBrowser(browserCa, UA);
    const done = await browser.request(`${rpBase}/auth/oidc/login?provider=corp`);
    // The callback sends the browser to the post-login page: the web console's route when the
    // console is built (its app fallback answers 200), a 404 of the API when it is not.
    expect(done.trail[0], done.trail.join('\n')).toMatch(/^302 .*\/auth\/oidc\/login/);
    expect(done.trail.at(-2), done.trail.join('\n')).toMatch(/^302 .*\/auth\/oidc\/callback/);
    expect(done.trail.at(-1), done.trail.join('\n')).toMatch(new RegExp(`^(200|404) ${rpBase}/welcome$`));
    expect(browser.cookie(rpBase, SESSION_COOKIE)).toBeDefined();

    const listed = await browser.request(`${rpBase}/api/v1/certificates`);
    expect(listed.status).toBe(200);
    expect(JSON.parse(listed.body).data.map((c: { id: string }) => c.id)).toContain(certificateId);
    const revoke = await browser.request(`${rpBase}/api/v1/certificates/${certificateId}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [CSRF_HEADER]: browser.cookie(rpBase, CSRF_COOKIE)! },
      body: JSON.stringify({ reason: 'keyCompromise' }),
    });
    expect(revoke.status).toBe(403);
    expect(JSON.parse(revoke.body)).toMatchObject({ status: 403 });
    // The revocation service never ran: the certificate is as it was, no revocation audited.
    const after = await api(a, 'GET', `/api/v1/certificates/${certificateId}`);
    expect(after.json.status).not.toBe('revoked');
    const revocations = await api(a, 'GET', `/api/v1/audit?resource_id=${certificateId}&per_page=100`);
    expect(revocations.json.data.filter((e: { action: string }) => /revoke/.test(e.action))).toEqual([]);
    // Another session's user of the same provider: who signed in is a user with the viewer role.
    const users = await api(a, 'GET', '/api/v1/auth/users');
    const carol = users.json.data.find((u: { subject: string }) => u.subject === 'carol');
    expect(carol).toMatchObject({ provider_id: 'corp', email: 'carol@example.test' });
  });

  it('ends the session when the provider sends its back-channel logout token', async () => {
    const browser = new CookieBrowser(browserCa, UA);
    await browser.request(`${rpBase}/auth/oidc/login?provider=corp`);
    const cookie = browser.cookie(rpBase, SESSION_COOKIE);
    expect(cookie).toBeDefined();
    expect((await browser.request(`${rpBase}/api/v1/certificates`)).status).toBe(200);
    // Sign-out at the provider: it ends its session and posts a logout token to the server.
    const form = await browser.request(`${issuer}/session/end?client_id=${CLIENT_ID}`);
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(form.body)?.[1];
    expect(xsrf, form.body.slice(0, 300)).toBeDefined();
    await browser.request(`${issuer}/session/end/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ xsrf: xsrf!, logout: 'yes' }).toString(),
    });
    // The old cookie, sent again as it was, no longer opens anything.
    const stale = await urlCall(browserCa, `${rpBase}/api/v1/certificates`, {
      headers: { cookie: `${SESSION_COOKIE}=${cookie}`, 'user-agent': UA },
    });
    expect(stale.status).toBe(401);
    const logged = await api(a, 'GET', '/api/v1/audit?action=oidc_backchannel_logout&category=auth');
    expect(logged.json.total).toBeGreaterThanOrEqual(1);
    expect(logged.json.data[0]).toMatchObject({ category: 'auth', resource_id: 'corp' });
  });

  it('cannot reach the provider from a process without the CA bundle', async () => {
    const refused = await httpsCall(b.port, serverCa, '/auth/oidc/login?provider=corp', {
      headers: { 'user-agent': UA },
    });
    expect(refused.status).toBe(302);
    expect(refused.headers.location).toBe('/login?error=oidc_failed&reason=provider_unavailable');
    const failed = await api(b, 'GET', '/api/v1/audit?action=login_failed&category=auth');
    expect(failed.json.data[0]).toMatchObject({
      resource_id: 'corp',
      details: { reason: 'provider_unavailable' },
    });
  });

  it('lets break-glass in while the provider is stopped, and locks out across both processes', async () => {
    idpServer.closeAllConnections();
    await new Promise((r) => idpServer.close(r));
    await expect(urlCall(browserCa, `${issuer}/.well-known/openid-configuration`)).rejects.toThrow();

    expect(
      (await api(a, 'POST', '/api/v1/auth/breakglass/credentials', { actor_id: actor, password: PASSWORD }))
        .status,
    ).toBe(200);
    const login = (server: ServerProcess, password: string) =>
      httpsCall(server.port, serverCa, '/auth/breakglass/login', {
        method: 'POST',
        headers: { 'user-agent': UA },
        body: { actor_id: actor, password },
      });
    const signedIn = await login(a, PASSWORD);
    expect(signedIn.status).toBe(204);
    const cookies = [signedIn.headers['set-cookie'] ?? []].flat().map((c) => c.split(';')[0]!);
    const session = { cookie: cookies.join('; '), 'user-agent': UA };
    expect((await httpsCall(a.port, serverCa, '/api/v1/certificates', { headers: session })).status).toBe(
      200,
    );
    // The session lives in the shared database: the other process honours it too.
    expect((await httpsCall(b.port, serverCa, '/api/v1/certificates', { headers: session })).status).toBe(
      200,
    );

    // Three wrong passwords spread over both processes reach the threshold of 3.
    for (const server of [a, b, a]) {
      const wrong = await login(server, 'not the password, clearly');
      expect(wrong.status).toBe(401);
      expect(wrong.json).toMatchObject({ status: 401, detail: 'invalid break-glass credentials' });
    }
    // Locked on both: the right password gets the same answer as a wrong one, and no cookie.
    for (const server of [b, a]) {
      const locked = await login(server, PASSWORD);
      expect(locked.status).toBe(401);
      expect(locked.headers['set-cookie']).toBeUndefined();
    }
    const lockouts = await api(b, 'GET', `/api/v1/audit?action=breakglass_lockout&resource_id=${actor}`);
    expect(lockouts.json.data).toHaveLength(1);
    expect(lockouts.json.data[0].category).toBe('auth');
    const failures = await api(a, 'GET', `/api/v1/audit?action=breakglass_login_failed&resource_id=${actor}`);
    expect(failures.json.data.map((e: { details: { reason: string } }) => e.details.reason).sort()).toEqual([
      'locked',
      'locked',
      'wrong_password',
      'wrong_password',
      'wrong_password',
    ]);
    const listed = await api(a, 'GET', '/api/v1/auth/breakglass/credentials');
    expect(listed.json.data.find((c: { actor_id: string }) => c.actor_id === actor).locked).toBe(true);

    // An administrator unlocks on one process; the other lets the actor in again.
    expect((await api(b, 'POST', `/api/v1/auth/breakglass/credentials/${actor}/unlock`)).status).toBe(204);
    expect((await login(a, PASSWORD)).status).toBe(204);
  });
});
