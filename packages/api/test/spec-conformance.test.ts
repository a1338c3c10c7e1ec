import { ManualClock } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AcmeTestClient, newAccountKey, ORIGIN } from './support/acme-client.js';
import { createCertificate, type References, seedReferences } from './support/inventory-fixtures.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Answers the specifications fix: bulk reassign takes `ids` (its earlier `certificate_ids` too),
 * OpenID Connect back-channel logout answers its one 400 for every failure whatever the media
 * type, and an ACME order for an identifier type the server does not certify (`email`) is
 * `unsupportedIdentifier` (RFC 8555 §7.4).
 */

let app: TestApp;
let refs: References;

beforeAll(async () => {
  app = await createTestApp({
    clock: new ManualClock('2026-03-01T00:00:00Z'),
    handler: { rateLimits: { enrollment: 0, public: 0 } },
  });
  refs = await seedReferences(app);
}, 180_000);
afterAll(() => app?.close());

describe('bulk reassign', () => {
  it('takes ids, and certificate_ids as before; one of them, not both', async () => {
    const other = (await app.call('POST', '/api/v1/owners', { name: 'Bob', email: 'bob@example.com' })).body
      .id;
    const a = await createCertificate(app, refs, { name: 'a' });
    const b = await createCertificate(app, refs, { name: 'b' });
    const byIds = await app.call('POST', '/api/v1/certificates/bulk-reassign', {
      ids: [a.id],
      owner_id: other,
    });
    expect(byIds.status, JSON.stringify(byIds.body)).toBe(200);
    expect(byIds.body).toMatchObject({ total_requested: 1, total_reassigned: 1, total_failed: 0 });
    const byOld = await app.call('POST', '/api/v1/certificates/bulk-reassign', {
      certificate_ids: [b.id],
      owner_id: other,
    });
    expect(byOld.body).toMatchObject({ total_requested: 1, total_reassigned: 1 });
    for (const id of [a.id, b.id]) {
      expect((await app.call('GET', `/api/v1/certificates/${id}`)).body.owner_id).toBe(other);
    }
    const both = await app.call('POST', '/api/v1/certificates/bulk-reassign', {
      ids: [a.id],
      certificate_ids: [b.id],
      owner_id: refs.owner,
    });
    expect(both.status).toBe(400);
    expect(both.body.errors[0].field).toBe('ids');
    const neither = await app.call('POST', '/api/v1/certificates/bulk-reassign', { owner_id: refs.owner });
    expect(neither.status).toBe(400);
    expect(neither.body.errors).toEqual([{ field: 'ids', message: 'is required' }]);
    expect((await app.call('GET', `/api/v1/certificates/${a.id}`)).body.owner_id).toBe(other);
  });
});

describe('OIDC back-channel logout', () => {
  const post = async (headers: Record<string, string>, body?: string) => {
    const res = await app.handler(
      new Request('https://localhost:8443/auth/oidc/back-channel-logout', {
        method: 'POST',
        headers,
        ...(body === undefined ? {} : { body }),
      }),
      { remoteAddress: '127.0.0.1' },
    );
    return { status: res.status, cacheControl: res.headers.get('cache-control'), body: await res.json() };
  };

  it('answers the one 400 for every failure, whatever the media type: never a 415', async () => {
    const uniform = { status: 400, cacheControl: 'no-store', body: { error: 'invalid_request' } };
    for (const [headers, body] of [
      [{ 'content-type': 'text/plain' }, 'logout_token=abc'],
      [{ 'content-type': 'application/json' }, '{"logout_token":"abc"}'],
      [{ 'content-type': 'multipart/form-data; boundary=x' }, '--x--'],
      [{ 'content-type': 'application/jwt' }, 'a.b.c'],
      [{}, 'logout_token=abc'],
      [{ 'content-type': 'application/x-www-form-urlencoded' }, `logout_token=${'a'.repeat(40_000)}`],
      [{ 'content-type': 'application/x-www-form-urlencoded' }, undefined],
    ] as [Record<string, string>, string | undefined][]) {
      expect({ headers, answer: await post(headers, body) }).toEqual({ headers, answer: uniform });
    }
  });
});

describe('ACME identifier types', () => {
  it('answers unsupportedIdentifier for an email identifier, naming it; dns still orders', async () => {
    const acme = new AcmeTestClient(app.handler);
    const key = newAccountKey();
    const account = await acme.post(`${ORIGIN}/acme/new-account`, { termsOfServiceAgreed: true }, { key });
    expect(account.status).toBe(201);
    const kid = account.headers.get('location')!;
    for (const type of ['email', 'uri', 'permanent-identifier']) {
      const res = await acme.post(
        `${ORIGIN}/acme/new-order`,
        {
          identifiers: [
            { type: 'dns', value: 'www.example.test' },
            { type, value: 'someone@example.test' },
          ],
        },
        { key, kid },
      );
      expect({ type, status: res.status, problem: res.body.type }).toEqual({
        type,
        status: 400,
        problem: 'urn:ietf:params:acme:error:unsupportedIdentifier',
      });
      expect(res.body.detail).toContain(`'${type}'`);
    }
    const ok = await acme.post(
      `${ORIGIN}/acme/new-order`,
      { identifiers: [{ type: 'dns', value: 'www.example.test' }] },
      { key, kid },
    );
    expect(ok.status).toBe(201);
  });
});
