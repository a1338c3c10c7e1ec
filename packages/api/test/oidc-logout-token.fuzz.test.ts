import { silentLogger } from '@certwright/core';
import { createOutboundClient } from '@certwright/core/net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OidcRelyingParty } from '../src/auth/oidc.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Back-channel logout tokens are bytes from anyone on the network: whatever arrives, the relying
 * party answers false (the uniform 400) without throwing, and ends no session.
 */
describe('back-channel logout token parsing', () => {
  let app: TestApp;
  let rp: OidcRelyingParty;
  beforeAll(async () => {
    app = await createTestApp();
    await app.storage.oidcProviders.create({
      tenant_id: 'default',
      name: 'unreachable',
      issuer: 'https://127.0.0.1:9',
      client_id: 'cw',
      scopes: ['openid'],
      groups_claim: 'groups',
      email_claim: 'email',
      name_claim: 'name',
      redirect_uri: 'https://localhost/auth/oidc/callback',
      post_login_url: '/',
      enabled: true,
    });
    rp = new OidcRelyingParty({
      services: app.services,
      outbound: createOutboundClient({ operatorConfigured: true }),
      logger: silentLogger,
    });
  }, 180_000);
  afterAll(() => app.close());

  it('refuses arbitrary and JWT-shaped input without throwing', async () => {
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const jwtLike = fc
      .tuple(fc.jsonValue({ maxDepth: 3 }), fc.jsonValue({ maxDepth: 3 }), fc.string({ maxLength: 40 }))
      .map(([h, p, s]) => `${b64(h)}.${b64(p)}.${Buffer.from(s).toString('base64url')}`);
    const issuerNamed = fc
      .record({ sub: fc.string(), sid: fc.string(), jti: fc.string(), iat: fc.integer() })
      .map(
        (claims) =>
          `${b64({ alg: 'RS256', kid: 'x' })}.${b64({ iss: 'https://127.0.0.1:9', aud: 'cw', ...claims })}.c2ln`,
      );
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ maxLength: 300 }), jwtLike, issuerNamed), async (token) => {
        expect(await rp.backChannelLogout(token)).toBe(false);
      }),
      { seed: 1527, numRuns: 150 },
    );
    expect(await rp.backChannelLogout(null)).toBe(false);
    expect(await rp.backChannelLogout(`${'a'.repeat(20_000)}.b.c`)).toBe(false);
  }, 120_000);
});
