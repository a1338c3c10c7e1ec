import { type OidcProvider, readBodyBytes, type Services, type TransportContext } from '@certwright/core';
import { z } from 'zod';
import { type OidcRelyingParty, PRELOGIN_COOKIE } from '../auth/oidc.js';
import { actorOf, tenantOf } from '../auth/principal.js';
import { sessionCookies } from '../auth/session-cookie.js';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { idParams, timestamp } from './crud.js';

const PATH = '/api/v1/auth/oidc/providers';
const TAG = 'auth';

const httpsUrl = z.url({ protocol: /^https$/, error: 'must be an https URL' }).max(2048);
const claimName = z.string().min(1).max(255);

const providerJson = z.object({
  id: z.string(),
  tenant_id: z.string(),
  name: z.string(),
  issuer: z.string(),
  client_id: z.string(),
  client_secret_set: z.boolean().describe('the secret itself is write-only'),
  scopes: z.array(z.string()),
  groups_claim: z.string(),
  email_claim: z.string(),
  name_claim: z.string(),
  redirect_uri: z.string(),
  post_login_url: z.string(),
  enabled: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
});

const providerFields = {
  name: z.string().min(1).max(255),
  issuer: httpsUrl,
  client_id: z.string().min(1).max(512),
  client_secret: z.string().min(1).max(1024).nullable().describe('write-only; null removes it'),
  scopes: z
    .array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]{1,128}$/))
    .max(32)
    .refine((s) => s.includes('openid'), 'must include openid'),
  groups_claim: claimName,
  email_claim: claimName,
  name_claim: claimName,
  redirect_uri: httpsUrl,
  post_login_url: z
    .string()
    .max(2048)
    .refine((u) => /^\/(?!\/)/.test(u) || /^https:\/\//.test(u), 'must be a path (/…) or an https URL'),
  enabled: z.boolean(),
};
const providerCreate = z.strictObject({
  id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/)
    .optional()
    .describe('chosen id; default oidc-<uuid>'),
  ...providerFields,
  client_secret: providerFields.client_secret.optional(),
  scopes: providerFields.scopes.default(['openid', 'email', 'profile']),
  groups_claim: claimName.default('groups'),
  email_claim: claimName.default('email'),
  name_claim: claimName.default('name'),
  post_login_url: providerFields.post_login_url.default('/'),
  enabled: z.boolean().default(true),
});
const providerUpdate = z.strictObject(
  Object.fromEntries(Object.entries(providerFields).map(([k, v]) => [k, v.optional()])) as {
    [K in keyof typeof providerFields]: z.ZodOptional<(typeof providerFields)[K]>;
  },
);

const jwksStatusJson = z.object({
  provider_id: z.string(),
  issuer: z.string(),
  jwks_uri: z.string().nullable(),
  key_ids: z.array(z.string()),
  key_count: z.number().int(),
  fetched_at: timestamp.nullable(),
  last_error: z.string().nullable(),
});
const testRequest = z.strictObject({
  issuer: httpsUrl,
  client_id: z.string().min(1).max(512),
  client_secret: z.string().min(1).max(1024).optional(),
  redirect_uri: httpsUrl,
});
const testResult = z.object({
  ok: z.boolean(),
  issuer: z.string().nullable(),
  authorization_endpoint: z.string().nullable(),
  token_endpoint: z.string().nullable(),
  userinfo_endpoint: z.string().nullable(),
  jwks_uri: z.string().nullable(),
  end_session_endpoint: z.string().nullable(),
  backchannel_logout_supported: z.boolean(),
  backchannel_logout_session_supported: z.boolean(),
  scopes_supported: z.array(z.string()),
  error: z.string().nullable(),
});

const view = (p: OidcProvider) => ({
  id: p.id,
  tenant_id: p.tenant_id,
  name: p.name,
  issuer: p.issuer,
  client_id: p.client_id,
  client_secret_set: p.client_secret_set,
  scopes: p.scopes,
  groups_claim: p.groups_claim,
  email_claim: p.email_claim,
  name_claim: p.name_claim,
  redirect_uri: p.redirect_uri,
  post_login_url: p.post_login_url,
  enabled: p.enabled,
  created_at: p.created_at,
  updated_at: p.updated_at,
});

const BROWSER = 'browsers sign in through the identity provider; the flow authenticates itself';

/** OIDC provider administration and the browser sign-in flow (docs/auth/oidc.md). */
export function authOidcRoutes(
  services: Services,
  rp: OidcRelyingParty,
  clientAddress: (request: Request, transport: TransportContext) => string,
): RouteSpec[] {
  const people = services.people;
  const redirect = (location: string, cookies: string[]) => {
    const headers = new Headers({ location, 'cache-control': 'no-store' });
    for (const cookie of cookies) headers.append('set-cookie', cookie);
    return new Response(null, { status: 302, headers });
  };
  const clearPrelogin = `${PRELOGIN_COOKIE}=; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=0`;
  const failed = (reason: string) =>
    redirect(`/login?error=oidc_failed&reason=${encodeURIComponent(reason)}`, [clearPrelogin]);
  return [
    defineRoute({
      method: 'GET',
      path: PATH,
      operationId: 'listOidcProviders',
      permission: 'auth.oidc.list',
      summary: "The tenant's OIDC providers",
      tags: [TAG],
      responses: {
        200: { description: 'providers by name', schema: z.object({ data: z.array(providerJson) }) },
      },
      handle: async ({ principal }) => ({
        status: 200,
        body: { data: (await people.listProviders(tenantOf(principal))).map(view) },
      }),
    }),
    defineRoute({
      method: 'POST',
      path: PATH,
      operationId: 'createOidcProvider',
      permission: 'auth.oidc.create',
      summary: 'Add an OIDC provider; client_secret is write-only and sealed at rest',
      tags: [TAG],
      body: providerCreate,
      responses: {
        201: { description: 'the provider', schema: providerJson },
        409: { description: 'the id or name is taken' },
      },
      handle: async ({ body, principal }) => {
        const { client_secret, id, ...rest } = body;
        const created = await people.createProvider(actorOf(principal), tenantOf(principal), {
          ...rest,
          ...(id ? { id } : {}),
          ...(client_secret !== undefined ? { client_secret } : {}),
        });
        return { status: 201, body: view(created) };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: `${PATH}/{id}`,
      operationId: 'updateOidcProvider',
      permission: 'auth.oidc.edit',
      summary: 'Change an OIDC provider; omitted fields keep their values',
      tags: [TAG],
      params: idParams,
      body: providerUpdate,
      responses: {
        200: { description: 'the provider', schema: providerJson },
        404: { description: 'no such provider in your tenant' },
      },
      handle: async ({ params, body, principal }) => {
        const updated = await people.updateProvider(actorOf(principal), tenantOf(principal), params.id, body);
        rp.forget(params.id);
        return { status: 200, body: view(updated) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: `${PATH}/{id}`,
      operationId: 'deleteOidcProvider',
      permission: 'auth.oidc.delete',
      summary: 'Remove an OIDC provider (its users and sessions stay until they end)',
      tags: [TAG],
      params: idParams,
      responses: { 204: { description: 'removed' }, 404: { description: 'no such provider in your tenant' } },
      handle: async ({ params, principal }) => {
        await people.deleteProvider(actorOf(principal), tenantOf(principal), params.id);
        rp.forget(params.id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'GET',
      path: `${PATH}/{id}/jwks-status`,
      operationId: 'getOidcJwksStatus',
      permission: 'auth.oidc.list',
      summary: "The provider's signing keys as cached",
      tags: [TAG],
      params: idParams,
      responses: {
        200: { description: 'the key set status', schema: jwksStatusJson },
        404: { description: 'no such provider in your tenant' },
      },
      handle: async ({ params, principal }) => ({
        status: 200,
        body: await rp.jwksStatus(await people.getProvider(tenantOf(principal), params.id), false),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: `${PATH}/{id}/refresh`,
      operationId: 'refreshOidcProvider',
      permission: 'auth.oidc.edit',
      summary: "Fetch the provider's discovery document and keys again",
      tags: [TAG],
      params: idParams,
      responses: {
        200: { description: 'the key set status after the refresh', schema: jwksStatusJson },
        404: { description: 'no such provider in your tenant' },
      },
      handle: async ({ params, principal }) => ({
        status: 200,
        body: await rp.jwksStatus(await people.getProvider(tenantOf(principal), params.id), true),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/auth/oidc/test',
      operationId: 'testOidcDiscovery',
      permission: 'auth.oidc.create',
      summary: 'Dry-run discovery of a provider before saving it; failures are in the result',
      tags: [TAG],
      body: testRequest,
      responses: { 200: { description: 'what discovery found', schema: testResult } },
      handle: async ({ body }) => ({ status: 200, body: await rp.test(body) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/auth/oidc/login',
      operationId: 'oidcLogin',
      permission: null,
      public: { why: BROWSER, rateLimit: 'public' },
      summary: 'Start a sign-in: 302 to the identity provider, with a pre-login cookie',
      tags: [TAG],
      query: z.object({ provider: z.string().min(1).max(128) }),
      responses: { 302: { description: 'to the identity provider, or to /login with the failure reason' } },
      handle: async ({ query, request, transport }) => {
        try {
          const started = await rp.login(query.provider, request, clientAddress(request, transport));
          return redirect(started.location, [started.cookie]);
        } catch (error) {
          const reason = (error as { reason?: string }).reason;
          if (!reason) throw error;
          return failed(reason);
        }
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/auth/oidc/callback',
      operationId: 'oidcCallback',
      permission: null,
      public: { why: BROWSER, rateLimit: 'public' },
      summary: 'The identity provider sends the browser back here: 302 to the post-login URL or to /login',
      tags: [TAG],
      responses: { 302: { description: 'signed in, or /login?error=oidc_failed&reason=<category>' } },
      handle: async ({ request, transport }) => {
        const outcome = await rp.callback(request, clientAddress(request, transport));
        if (!outcome.ok) return failed(outcome.reason);
        return redirect(outcome.location, [
          ...sessionCookies(outcome.token, outcome.maxAgeSeconds),
          clearPrelogin,
        ]);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/auth/oidc/back-channel-logout',
      operationId: 'oidcBackChannelLogout',
      permission: null,
      public: {
        why: 'the identity provider ends sessions with a logout token it signs',
        rateLimit: 'public',
      },
      summary:
        'OpenID Connect Back-Channel Logout 1.0: 200 when the token was valid, a uniform 400 otherwise',
      tags: [TAG],
      // Every failure — another media type included — is the one 400 of docs/auth/failures.md,
      // not a 415: the provider learns nothing from which check failed.
      readsBody: 'any',
      responses: {
        200: { description: 'the sessions of the token ended' },
        400: { description: 'any failure, always the same answer' },
      },
      handle: async ({ request }) => {
        let token: string | null = null;
        const type = request.headers.get('content-type') ?? '';
        if (/^application\/x-www-form-urlencoded\b/i.test(type)) {
          // Read at most 32 KiB: a longer body is a failure like any other, and is not buffered.
          const bytes = await readBodyBytes(request, 32 * 1024).catch(() => undefined);
          const text = bytes ? new TextDecoder().decode(bytes) : '';
          token = new URLSearchParams(text).get('logout_token');
        }
        const ok = await rp.backChannelLogout(token).catch(() => false);
        const headers = { 'cache-control': 'no-store' };
        if (ok) return new Response(null, { status: 200, headers });
        return new Response(JSON.stringify({ error: 'invalid_request' }), {
          status: 400,
          headers: { ...headers, 'content-type': 'application/json' },
        });
      },
    }),
  ];
}
