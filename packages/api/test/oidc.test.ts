import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { DEFAULT_TENANT_ID, MemoryEphemeralStore, systemClock } from '@certwright/core';
import { createAdministratorClient } from '@certwright/core/net';
import {
  certificateToPem,
  createSelfSignedCertificate,
  exportPkcs8Pem,
  generateKeyPair,
} from '@certwright/core/pki';
import { importJWK, SignJWT } from 'jose';
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequestListener } from '../../server/src/request-listener.js';
import { CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE } from '../src/index.js';
import { CookieBrowser, httpsCall } from './support/https-browser.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const CLIENT_ID = 'certwright-rp';
const CLIENT_SECRET = 'rp-secret-0123456789abcdefghijklmnop';

async function tlsMaterial() {
  const key = await generateKeyPair('ECDSA-P256');
  const cert = createSelfSignedCertificate(
    {
      subject: 'CN=127.0.0.1',
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + 86_400_000),
      subjectAltNames: [{ type: 'ip', value: '127.0.0.1' }],
      basicConstraints: { ca: true },
    },
    key.privateKey,
  );
  return { cert: certificateToPem(cert.der), key: exportPkcs8Pem(key.privateKey) };
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

function signingKey(kid: string) {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    ...(privateKey.export({ format: 'jwk' }) as Record<string, unknown>),
    kid,
    use: 'sig',
    alg: 'RS256',
  };
}

/** Who the identity provider signs in next, and with which groups. */
const people: Record<string, { groups: string[] }> = {
  alice: { groups: ['pki-admins', 'staff'] },
  bob: { groups: ['staff'] },
};
let nextLogin = 'alice';

let app: TestApp;
let rpServer: Server;
let idpServer: Server;
let rpBase: string;
let issuer: string;
let ca: string[];
let idp: Provider;
let idpKeys: Record<string, unknown>[];

async function startIdp(port: number | undefined, tls: { cert: string; key: string }, rpCa: string) {
  const server = createHttpsServer({ ...tls, minVersion: 'TLSv1.2' });
  const p = port ?? (await listen(server));
  issuer = `https://127.0.0.1:${p}`;
  idp = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [`${rpBase}/auth/oidc/callback`],
        post_logout_redirect_uris: [`${rpBase}/`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        backchannel_logout_uri: `${rpBase}/auth/oidc/back-channel-logout`,
        backchannel_logout_session_required: true,
      },
    ],
    jwks: { keys: idpKeys as never },
    conformIdTokenClaims: false,
    claims: { openid: ['sub'], email: ['email'], profile: ['name'], groups: ['groups'] },
    scopes: ['openid', 'email', 'profile', 'groups'],
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
    cookies: { keys: ['idp-cookie-key-0123456789'] },
    findAccount: async (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: async () => ({
        sub: id,
        email: `${id}@example.test`,
        name: id.toUpperCase(),
        groups: people[id]?.groups ?? [],
      }),
    }),
    // The provider delivers back-channel logout tokens over TLS to the RP's loopback listener.
    fetch: async (url: string | URL, init: RequestInit) => {
      const res = await httpsCall(rpCa, String(url), {
        method: init.method ?? 'POST',
        headers: Object.fromEntries(new Headers(init.headers).entries()),
        body: typeof init.body === 'string' ? init.body : init.body?.toString(),
      });
      return new Response(res.body || null, { status: res.status });
    },
  } as never);
  server.on('request', async (req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      const details = await idp.interactionDetails(req, res);
      if (details.prompt.name === 'login') {
        await idp.interactionFinished(
          req,
          res,
          { login: { accountId: nextLogin } },
          { mergeWithLastSubmission: false },
        );
        return;
      }
      const grant = new idp.Grant({ accountId: details.session!.accountId, clientId: CLIENT_ID });
      grant.addOIDCScope('openid email profile groups');
      await idp.interactionFinished(
        req,
        res,
        { consent: { grantId: await grant.save() } },
        { mergeWithLastSubmission: true },
      );
      return;
    }
    idp.callback()(req, res);
  });
  if (port !== undefined) await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return server;
}

beforeAll(async () => {
  const rpTls = await tlsMaterial();
  const idpTls = await tlsMaterial();
  idpTlsCache = idpTls;
  ca = [rpTls.cert, idpTls.cert];
  idpKeys = [signingKey('k1')];
  rpServer = createHttpsServer({ ...rpTls, minVersion: 'TLSv1.3' });
  rpBase = `https://127.0.0.1:${await listen(rpServer)}`;
  idpServer = await startIdp(undefined, idpTls, rpTls.cert);
  // Tokens carry the provider's real time; the logout-token age check reads the service clock.
  app = await createTestApp({
    clock: systemClock,
    handler: {
      // The provider listens on loopback: the test-only opt-in admits it.
      oidc: { ca: idpTls.cert, outbound: createAdministratorClient({ loopbackForTests: true }) },
      ephemeral: new MemoryEphemeralStore(),
      rateLimits: { public: 0 },
    },
  });
  rpServer.on('request', createRequestListener(app.handler));
  const created = await app.call('POST', '/api/v1/auth/oidc/providers', {
    id: 'corp',
    name: 'Corp IdP',
    issuer,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
    scopes: ['openid', 'email', 'profile', 'groups'],
    redirect_uri: `${rpBase}/auth/oidc/callback`,
    post_login_url: '/welcome',
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect(created.body.client_secret_set).toBe(true);
  expect(JSON.stringify(created.body)).not.toContain(CLIENT_SECRET);
  await app.call('POST', '/api/v1/auth/oidc/group-mappings', {
    provider_id: 'corp',
    group: 'pki-admins',
    role: 'operator',
  });
}, 180_000);

afterAll(async () => {
  rpServer?.closeAllConnections();
  idpServer?.closeAllConnections();
  await Promise.all([rpServer, idpServer].map((s) => new Promise((r) => s?.close(r))));
  await app?.close();
});

async function signIn(browser: CookieBrowser, who: string) {
  nextLogin = who;
  const res = await browser.request(`${rpBase}/auth/oidc/login?provider=corp`);
  return res;
}

describe('OIDC sign-in against oidc-provider on loopback', { timeout: 120_000 }, () => {
  it('signs a user in through the full redirect flow; their groups map to roles', async () => {
    const browser = new CookieBrowser(ca);
    const done = await signIn(browser, 'alice');
    expect(done.trail.at(-1), done.trail.join('\n')).toBe(`404 ${rpBase}/welcome`);
    const token = browser.cookie(rpBase, SESSION_COOKIE);
    expect(token).toBeDefined();
    expect(browser.cookie(rpBase, '__Host-cw_prelogin')).toBeUndefined();
    const users = await app.storage.users.list({ tenant_id: DEFAULT_TENANT_ID, perPage: 500 });
    const alice = users.items.find((u) => u.subject === 'alice' && u.provider_id === 'corp');
    expect(alice?.email).toBe('alice@example.test');
    // operator through the pki-admins mapping: may create owners, may not revoke or read the audit trail.
    const csrf = browser.cookie(rpBase, CSRF_COOKIE)!;
    const owner = await browser.request(`${rpBase}/api/v1/owners`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [CSRF_HEADER]: csrf },
      body: JSON.stringify({ name: 'made by alice' }),
    });
    expect(owner.status).toBe(201);
    expect((await browser.request(`${rpBase}/api/v1/audit`)).status).toBe(403);

    const bob = new CookieBrowser(ca);
    await signIn(bob, 'bob');
    expect((await bob.request(`${rpBase}/api/v1/owners`)).status).toBe(403);
  });

  it('refuses a callback without its pre-login cookie, from another user agent, or replayed', async () => {
    const browser = new CookieBrowser(ca);
    nextLogin = 'alice';
    const start = await browser.request(`${rpBase}/auth/oidc/login?provider=corp`, {}, false);
    expect(start.status).toBe(302);
    // Walk the provider's pages by hand and stop at the redirect back to the RP.
    let location = start.headers.location as string;
    let callback = '';
    for (let i = 0; i < 10 && !callback; i += 1) {
      const hop = await browser.request(new URL(location, issuer).href, {}, false);
      location = hop.headers.location as string;
      if (location.startsWith(`${rpBase}/auth/oidc/callback`)) callback = location;
    }
    expect(callback).not.toBe('');
    const stranger = new CookieBrowser(ca);
    const noCookie = await stranger.request(callback, {}, false);
    expect(noCookie.headers.location).toBe('/login?error=oidc_failed&reason=missing_prelogin');
    const otherAgent = new CookieBrowser(ca, 'curl/8.0');
    otherAgent.jar.set(rpBase, new Map(browser.jar.get(rpBase)));
    const moved = await otherAgent.request(callback, {}, false);
    expect(moved.headers.location).toBe('/login?error=oidc_failed&reason=prelogin_mismatch');
    // The pre-login was consumed by the refused attempt: the real browser cannot reuse it either.
    const replay = await browser.request(callback, {}, false);
    expect(replay.headers.location).toBe('/login?error=oidc_failed&reason=missing_prelogin');
    expect(browser.cookie(rpBase, SESSION_COOKIE)).toBeUndefined();
    const failures = await app.storage.audit.list({ action: 'login_failed', perPage: 500 });
    expect(failures.items.filter((e) => e.category === 'auth').length).toBeGreaterThanOrEqual(3);
  });

  it('refuses a callback the provider answered with an error, a forged code, or for a provider disabled meanwhile', async () => {
    /** Starts a sign-in and walks the provider's pages, stopping at the redirect back to the RP. */
    const toCallback = async (browser: CookieBrowser) => {
      nextLogin = 'alice';
      let location = (await browser.request(`${rpBase}/auth/oidc/login?provider=corp`, {}, false)).headers
        .location as string;
      for (let i = 0; i < 10; i += 1) {
        if (location.startsWith(`${rpBase}/auth/oidc/callback`)) return new URL(location);
        location = (await browser.request(new URL(location, issuer).href, {}, false)).headers
          .location as string;
      }
      throw new Error('the provider never redirected back');
    };
    const usersBefore = (await app.storage.users.list({ tenant_id: DEFAULT_TENANT_ID, perPage: 500 })).total;
    const sessionsBefore = (await app.storage.sessions.list({ perPage: 500 })).total;
    const failuresBefore = (await app.storage.audit.list({ action: 'login_failed', perPage: 1 })).total;
    const refused: string[] = [];

    const denied = new CookieBrowser(ca);
    const deniedAt = await toCallback(denied);
    deniedAt.search = new URLSearchParams({
      error: 'access_denied',
      state: deniedAt.searchParams.get('state')!,
      iss: issuer,
    }).toString();
    refused.push((await denied.request(deniedAt.href, {}, false)).headers.location as string);

    const forged = new CookieBrowser(ca);
    const forgedAt = await toCallback(forged);
    forgedAt.searchParams.set('code', 'a-code-the-provider-never-issued');
    refused.push((await forged.request(forgedAt.href, {}, false)).headers.location as string);

    const late = new CookieBrowser(ca);
    const lateAt = await toCallback(late);
    expect((await app.call('PUT', '/api/v1/auth/oidc/providers/corp', { enabled: false })).status).toBe(200);
    try {
      refused.push((await late.request(lateAt.href, {}, false)).headers.location as string);
    } finally {
      expect((await app.call('PUT', '/api/v1/auth/oidc/providers/corp', { enabled: true })).status).toBe(200);
    }

    expect(refused).toEqual([
      '/login?error=oidc_failed&reason=provider_error',
      '/login?error=oidc_failed&reason=token_invalid',
      '/login?error=oidc_failed&reason=unknown_provider',
    ]);
    for (const browser of [denied, forged, late])
      expect(browser.cookie(rpBase, SESSION_COOKIE)).toBeUndefined();
    expect((await app.storage.users.list({ tenant_id: DEFAULT_TENANT_ID, perPage: 500 })).total).toBe(
      usersBefore,
    );
    expect((await app.storage.sessions.list({ perPage: 500 })).total).toBe(sessionsBefore);
    const failures = await app.storage.audit.list({ action: 'login_failed', perPage: 3 });
    expect(failures.total).toBe(failuresBefore + 3);
    expect(failures.items.map((e) => [e.category, e.resource_id, e.details.reason]).reverse()).toEqual([
      ['auth', 'corp', 'provider_error'],
      ['auth', 'corp', 'token_invalid'],
      ['auth', 'corp', 'unknown_provider'],
    ]);
  });

  it('ends the session when the provider sends a back-channel logout token', async () => {
    const browser = new CookieBrowser(ca);
    await signIn(browser, 'alice');
    expect((await browser.request(`${rpBase}/api/v1/certificates`)).status).toBe(200);
    // RP-initiated logout at the provider: it ends its session and notifies every RP back-channel.
    const form = await browser.request(`${issuer}/session/end?client_id=${CLIENT_ID}`);
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(form.body)?.[1];
    expect(xsrf, form.body.slice(0, 500)).toBeDefined();
    await browser.request(`${issuer}/session/end/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ xsrf: xsrf!, logout: 'yes' }).toString(),
    });
    expect((await browser.request(`${rpBase}/api/v1/certificates`)).status).toBe(401);
    const events = await app.storage.audit.list({ action: 'oidc_backchannel_logout', perPage: 500 });
    expect(events.total).toBeGreaterThanOrEqual(1);
  });

  it('answers a uniform 400 to forged, malformed and replayed logout tokens', async () => {
    const post = (body: string) =>
      httpsCall(ca, `${rpBase}/auth/oidc/back-channel-logout`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
    const answers = await Promise.all([
      post(''),
      post('logout_token=not-a-jwt'),
      post(`logout_token=${'a'.repeat(20_000)}`),
      post('logout_token=eyJhbGciOiJub25lIn0.eyJpc3MiOiJ4In0.'),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(answer.body).toBe('{"error":"invalid_request"}');
      expect(answer.headers['cache-control']).toBe('no-store');
    }
  });

  it('accepts a provider-signed logout token once, and refuses replay, nonce, wrong audience, age and missing event', async () => {
    const key = await importJWK(idpKeys[0] as never, 'RS256');
    const now = Math.floor(Date.now() / 1000);
    const sign = (claims: Record<string, unknown>, iat = now) =>
      new SignJWT({
        events: { 'http://schemas.openid.net/event/backchannel-logout': {} },
        sub: 'alice',
        jti: randomUUID(),
        ...claims,
      })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1', typ: 'logout+jwt' })
        .setIssuer(issuer)
        .setAudience(CLIENT_ID)
        .setIssuedAt(iat)
        .sign(key);
    const post = (token: string) =>
      httpsCall(ca, `${rpBase}/auth/oidc/back-channel-logout`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ logout_token: token }).toString(),
      });
    const browser = new CookieBrowser(ca);
    await signIn(browser, 'alice');
    expect((await browser.request(`${rpBase}/api/v1/certificates`)).status).toBe(200);
    const refused = [
      await sign({ nonce: 'n' }),
      await new SignJWT({
        events: { 'http://schemas.openid.net/event/backchannel-logout': {} },
        sub: 'alice',
        jti: randomUUID(),
      })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer(issuer)
        .setAudience('someone-else')
        .setIssuedAt(now)
        .sign(key),
      await sign({}, now - 3600),
      await sign({ events: {} }),
      await sign({ sub: undefined }),
    ];
    for (const token of refused) {
      const answer = await post(token);
      expect(answer.status).toBe(400);
      expect(answer.body).toBe('{"error":"invalid_request"}');
    }
    expect((await browser.request(`${rpBase}/api/v1/certificates`)).status).toBe(200);
    const good = await sign({});
    expect((await post(good)).status).toBe(200);
    expect((await browser.request(`${rpBase}/api/v1/certificates`)).status).toBe(401);
    expect((await post(good)).status).toBe(400);
  });

  it('reports the key set, and picks up a rotated key on refresh', async () => {
    const before = await app.call('GET', '/api/v1/auth/oidc/providers/corp/jwks-status');
    expect(before.status).toBe(200);
    expect(Object.keys(before.body).length).toBe(7);
    expect(before.body.key_ids).toEqual(['k1']);
    // The provider restarts with a new signing key on the same port.
    idpServer.closeAllConnections();
    await new Promise((r) => idpServer.close(r));
    idpKeys = [signingKey('k2'), ...idpKeys];
    const port = Number(new URL(issuer).port);
    idpServer = await startIdp(port, await tlsMaterialFromCa(), ca[0]!);
    const refreshed = await app.call('POST', '/api/v1/auth/oidc/providers/corp/refresh');
    expect(refreshed.body.key_ids).toEqual(['k2', 'k1']);
    const tested = await app.call('POST', '/api/v1/auth/oidc/test', {
      issuer,
      client_id: CLIENT_ID,
      redirect_uri: `${rpBase}/auth/oidc/callback`,
    });
    expect(tested.status).toBe(200);
    expect(Object.keys(tested.body).length).toBe(11);
    expect(tested.body.ok).toBe(true);
    expect(tested.body.backchannel_logout_supported).toBe(true);
  });

  it("refuses a deactivated user's sign-in with user_deactivated, and lets them in again once reactivated", async () => {
    const users = await app.storage.users.list({ tenant_id: DEFAULT_TENANT_ID, perPage: 500 });
    const bob = users.items.find((u) => u.subject === 'bob' && u.provider_id === 'corp')!;
    expect((await app.call('DELETE', `/api/v1/auth/users/${bob.id}`)).status).toBe(200);
    const browser = new CookieBrowser(ca);
    const refused = await signIn(browser, 'bob');
    expect(refused.trail.at(-1)).toMatch(/\/login\?error=oidc_failed&reason=user_deactivated$/);
    expect(browser.cookie(rpBase, SESSION_COOKIE)).toBeUndefined();
    await app.call('POST', `/api/v1/auth/users/${bob.id}/reactivate`);
    const again = new CookieBrowser(ca);
    await signIn(again, 'bob');
    expect(again.cookie(rpBase, SESSION_COOKIE)).toBeDefined();
  });
});

let idpTlsCache: { cert: string; key: string } | undefined;
async function tlsMaterialFromCa() {
  return idpTlsCache as { cert: string; key: string };
}
