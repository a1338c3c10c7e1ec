import { NonceStore } from '@certwright/protocols/acme';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AcmeTestClient, ORIGIN } from './support/acme-client.js';
import { createTestApp, type TestApp } from './support/test-app.js';

let app: TestApp;
let client: AcmeTestClient;
beforeAll(async () => {
  app = await createTestApp();
  client = new AcmeTestClient(app.handler);
}, 180_000);
afterAll(() => app.close());

const INDEX = `<${ORIGIN}/acme/directory>;rel="index"`;

describe('ACME directory and nonces', () => {
  it('serves the default profile’s directory without an API key, with every resource URL', async () => {
    const answer = await client.send('GET', `${ORIGIN}/acme/directory`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      newNonce: `${ORIGIN}/acme/new-nonce`,
      newAccount: `${ORIGIN}/acme/new-account`,
      newOrder: `${ORIGIN}/acme/new-order`,
      revokeCert: `${ORIGIN}/acme/revoke-cert`,
      keyChange: `${ORIGIN}/acme/key-change`,
      renewalInfo: `${ORIGIN}/acme/renewal-info`,
      meta: { externalAccountRequired: false, profiles: { 'prof-default': expect.any(String) } },
    });
    expect(answer.headers.get('link')).toContain(INDEX);
    expect(answer.headers.get('replay-nonce')).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('answers new-nonce HEAD with 200 and GET with 204, never cacheable, each with a fresh nonce', async () => {
    const head = await client.send('HEAD', `${ORIGIN}/acme/new-nonce`);
    const get = await client.send('GET', `${ORIGIN}/acme/new-nonce`);
    expect(head.status).toBe(200);
    expect(get.status).toBe(204);
    for (const answer of [head, get]) {
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(answer.headers.get('link')).toContain(INDEX);
    }
    expect(head.headers.get('replay-nonce')).not.toBe(get.headers.get('replay-nonce'));
  });

  it('serves a profile under /acme/profile/{path_id} with its own URLs and meta', async () => {
    const created = await app.call('POST', '/api/v1/profiles', {
      name: 'ACME internal',
      description: 'internal TLS',
      enrollment: {
        issuer_id: 'iss-local',
        owner_id: 'own-default',
        team_id: 'team-default',
        renewal_policy_id: 'rp-default',
      },
      acme: {
        enabled: true,
        path_id: 'internal',
        eab_required: true,
        terms_of_service_url: 'https://example.com/tos',
        website_url: 'https://example.com/',
      },
    });
    expect(created.status).toBe(201);
    const answer = await client.send('GET', `${ORIGIN}/acme/profile/internal/directory`);
    expect(answer.status).toBe(200);
    expect(answer.body.newAccount).toBe(`${ORIGIN}/acme/profile/internal/new-account`);
    expect(answer.body.meta).toEqual({
      externalAccountRequired: true,
      termsOfService: 'https://example.com/tos',
      website: 'https://example.com/',
      profiles: { internal: 'internal TLS' },
    });
    expect(answer.headers.get('link')).toContain(`<${ORIGIN}/acme/profile/internal/directory>;rel="index"`);
  });

  it('answers 404 problems for unknown profiles and resources, and 405 with Allow for a wrong method', async () => {
    const unknown = await client.send('GET', `${ORIGIN}/acme/profile/nope/directory`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toBe('application/problem+json');
    expect(unknown.body.type).toBe('urn:ietf:params:acme:error:malformed');
    const noResource = await client.send('GET', `${ORIGIN}/acme/nothing-here`);
    expect(noResource.status).toBe(404);
    const wrong = await client.send('POST', `${ORIGIN}/acme/directory`, '{}');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, HEAD');
    expect(wrong.headers.get('replay-nonce')).toBeTruthy();
  });

  it('does not serve a profile whose ACME block is disabled', async () => {
    const created = await app.call('POST', '/api/v1/profiles', { name: 'No ACME here' });
    const answer = await client.send('GET', `${ORIGIN}/acme/profile/${created.body.id}/directory`);
    expect(answer.status).toBe(404);
  });
});

describe('ACME over its rate limit', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await createTestApp({ handler: { rateLimits: { enrollment: 2 } } });
  }, 180_000);
  afterAll(() => limited.close());

  it('answers a rateLimited problem with Retry-After once a client spent its enrollment budget', async () => {
    const acme = new AcmeTestClient(limited.handler);
    expect((await acme.send('HEAD', `${ORIGIN}/acme/new-nonce`)).status).toBe(200);
    expect((await acme.send('GET', `${ORIGIN}/acme/directory`)).status).toBe(200);
    const refused = await acme.send('GET', `${ORIGIN}/acme/directory`);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect(refused.body.type).toBe('urn:ietf:params:acme:error:rateLimited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.body.status).toBe(429);
    // RFC 8555 §7.1: the index link of the directory the path names, on this answer too.
    expect(refused.headers.get('link')).toBe(`<${ORIGIN}/acme/directory>;rel="index"`);
    const profiled = await acme.send('HEAD', `${ORIGIN}/acme/profile/edge/new-nonce`);
    expect(profiled.status).toBe(429);
    expect(profiled.headers.get('link')).toBe(`<${ORIGIN}/acme/profile/edge/directory>;rel="index"`);
    // RFC 8555 §6.5: the refusal carries a fresh nonce, one the server accepts later.
    const nonce = refused.headers.get('replay-nonce');
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const again = await acme.send('HEAD', `${ORIGIN}/acme/new-nonce`);
    expect(again.status).toBe(429);
    expect(again.headers.get('replay-nonce')).not.toBe(nonce);
    await expect(new NonceStore(limited.services.deps.ephemeral!).consume(nonce!)).resolves.toBeUndefined();
  });
});
