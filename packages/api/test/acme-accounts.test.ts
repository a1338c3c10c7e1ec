import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AccountKey, AcmeTestClient, newAccountKey, ORIGIN, signJws } from './support/acme-client.js';
import { createTestApp, type TestApp } from './support/test-app.js';

let app: TestApp;
let client: AcmeTestClient;
beforeAll(async () => {
  // These tests send far more than a client's enrollment budget; the limit has its own test.
  app = await createTestApp({ handler: { rateLimits: { enrollment: 0 } } });
  client = new AcmeTestClient(app.handler);
}, 180_000);
afterAll(() => app.close());

const A = `${ORIGIN}/acme`;
const ERR = 'urn:ietf:params:acme:error:';
const accountCount = async () => (await app.storage.acmeAccounts.list()).total;

async function register(key: AccountKey, payload: Record<string, unknown> = { termsOfServiceAgreed: true }) {
  return client.post(`${A}/new-account`, payload, { key });
}

/** A registered account: its key and URL. */
async function account(alg: AccountKey['alg'] = 'ES256') {
  const key = newAccountKey(alg);
  const answer = await register(key, { contact: ['mailto:ops@example.com'] });
  expect(answer.status).toBe(201);
  return { key, url: answer.headers.get('location') as string };
}

function expectProblem(
  answer: { status: number; headers: Headers; body: { type: string } },
  status: number,
  type: string,
) {
  expect({ status: answer.status, type: answer.body.type }).toEqual({ status, type: `${ERR}${type}` });
  expect(answer.headers.get('content-type')).toBe('application/problem+json');
  // Every answer, problems included, carries a fresh nonce and the directory link.
  expect(answer.headers.get('replay-nonce')).toMatch(/^[A-Za-z0-9_-]{22}$/);
  expect(answer.headers.get('link')).toMatch(
    /^<https:\/\/localhost:8443\/acme(\/profile\/[a-z]+)?\/directory>;rel="index"/,
  );
}

describe('ACME new-account', () => {
  it('creates an account (201 + Location) and gives the same key its account back (200)', async () => {
    const key = newAccountKey('EdDSA');
    const created = await register(key, {
      contact: ['mailto:admin@example.com'],
      termsOfServiceAgreed: true,
    });
    expect(created.status).toBe(201);
    const location = created.headers.get('location');
    expect(location).toMatch(new RegExp(`^${A}/account/acct-`));
    expect(created.body).toMatchObject({
      status: 'valid',
      contact: ['mailto:admin@example.com'],
      orders: `${location}/orders`,
    });
    const again = await register(key, {});
    expect(again.status).toBe(200);
    expect(again.headers.get('location')).toBe(location);
    const onlyExisting = await register(key, { onlyReturnExisting: true });
    expect(onlyExisting.status).toBe(200);
    expect(onlyExisting.headers.get('location')).toBe(location);
  });

  it('accepts RSA account keys (RS256)', async () => {
    const created = await register(newAccountKey('RS256'));
    expect(created.status).toBe(201);
  });

  it('answers accountDoesNotExist for onlyReturnExisting with an unknown key, creating nothing', async () => {
    const before = await accountCount();
    expectProblem(await register(newAccountKey(), { onlyReturnExisting: true }), 400, 'accountDoesNotExist');
    expect(await accountCount()).toBe(before);
  });

  it('refuses contacts other than one plain mailto: address, creating nothing', async () => {
    const before = await accountCount();
    expectProblem(await register(newAccountKey(), { contact: ['tel:+1555'] }), 400, 'unsupportedContact');
    expectProblem(
      await register(newAccountKey(), { contact: ['mailto:a@b.example,c@d.example'] }),
      400,
      'invalidContact',
    );
    expectProblem(
      await register(newAccountKey(), { contact: ['mailto:a@b.example?subject=x'] }),
      400,
      'invalidContact',
    );
    expect(await accountCount()).toBe(before);
  });
});

describe('ACME request authentication', () => {
  it('refuses a body that is not a JWS with malformed and a fresh nonce', async () => {
    const before = await accountCount();
    expectProblem(await client.send('POST', `${A}/new-account`, '{"protected":1}'), 400, 'malformed');
    expectProblem(await client.send('POST', `${A}/new-account`, 'not json'), 400, 'malformed');
    expect(await accountCount()).toBe(before);
  });

  it('refuses a JWS whose url is not the request URL (unauthorized), keeping its nonce unspent', async () => {
    const nonce = await client.nonce();
    const before = await accountCount();
    const jws = await signJws({}, { key: newAccountKey(), url: `${A}/new-order`, nonce });
    expectProblem(await client.send('POST', `${A}/new-account`, JSON.stringify(jws)), 403, 'unauthorized');
    expect(await accountCount()).toBe(before);
  });

  it('refuses a reused or unknown nonce with badNonce and hands out a fresh one to retry with', async () => {
    const key = newAccountKey();
    const nonce = await client.nonce();
    const jws = JSON.stringify(await signJws({}, { key, url: `${A}/new-account`, nonce }));
    expect((await client.send('POST', `${A}/new-account`, jws)).status).toBe(201);
    const before = await accountCount();
    const replay = await client.send('POST', `${A}/new-account`, jws);
    expectProblem(replay, 400, 'badNonce');
    const unknown = await client.post(
      `${A}/new-account`,
      {},
      { key: newAccountKey(), nonce: 'AAAAAAAAAAAAAAAAAAAAAA' },
    );
    expectProblem(unknown, 400, 'badNonce');
    expect(await accountCount()).toBe(before);
    // The nonce of the badNonce answer works.
    const retry = await client.post(
      `${A}/new-account`,
      {},
      { key: newAccountKey(), nonce: replay.headers.get('replay-nonce') },
    );
    expect(retry.status).toBe(201);
  });

  it('answers accountDoesNotExist for a kid naming no account', async () => {
    const answer = await client.post(`${A}/account/acct-nope`, '', {
      key: newAccountKey(),
      kid: `${A}/account/acct-nope`,
    });
    expectProblem(answer, 400, 'accountDoesNotExist');
  });

  it('refuses a request signed by another key than the kid’s account, changing nothing', async () => {
    const { url } = await account();
    const answer = await client.post(
      url,
      { contact: ['mailto:thief@example.com'] },
      { key: newAccountKey(), kid: url },
    );
    expectProblem(answer, 400, 'malformed');
    const id = url.slice(url.lastIndexOf('/') + 1);
    expect((await app.storage.acmeAccounts.get(id))?.contact).toEqual(['mailto:ops@example.com']);
  });

  it('refuses new-account signed with kid, and account requests signed with jwk', async () => {
    const { key, url } = await account();
    expectProblem(await client.post(`${A}/new-account`, {}, { key, kid: url }), 400, 'malformed');
    expectProblem(await client.post(url, '', { key }), 400, 'malformed');
  });

  it('refuses a body over the size cap with 413 before reading it', async () => {
    const answer = await client.send('POST', `${A}/new-account`, 'x'.repeat(70_000));
    expectProblem(answer, 413, 'malformed');
  });

  it('refuses a body that is not application/jose+json with 415', async () => {
    const answer = await client.send('POST', `${A}/new-account`, '{}', {
      'content-type': 'application/json',
    });
    expectProblem(answer, 415, 'malformed');
  });
});

describe('ACME account resource', () => {
  it('reads the account with POST-as-GET and replaces its contacts', async () => {
    const { key, url } = await account();
    const read = await client.post(url, '', { key, kid: url });
    expect(read.status).toBe(200);
    expect(read.body.contact).toEqual(['mailto:ops@example.com']);
    const updated = await client.post(url, { contact: ['mailto:new@example.com'] }, { key, kid: url });
    expect(updated.status).toBe(200);
    expect(updated.body.contact).toEqual(['mailto:new@example.com']);
  });

  it('refuses a request of one account addressed to another account’s URL', async () => {
    const first = await account();
    const second = await account();
    const answer = await client.post(second.url, '', { key: first.key, kid: first.url, sendTo: second.url });
    expectProblem(answer, 403, 'unauthorized');
  });

  it('deactivates an account for good: its key is unauthorized afterwards, for new-account too', async () => {
    const { key, url } = await account();
    const deactivated = await client.post(url, { status: 'deactivated' }, { key, kid: url });
    expect(deactivated.status).toBe(200);
    expect(deactivated.body.status).toBe('deactivated');
    expectProblem(await client.post(url, '', { key, kid: url }), 403, 'unauthorized');
    expectProblem(await client.post(url, { status: 'valid' }, { key, kid: url }), 403, 'unauthorized');
    expectProblem(await register(key, {}), 403, 'unauthorized');
  });

  it('refuses the very next request of an account deactivated outside the ACME handler (its cached read is dropped)', async () => {
    const { key, url } = await account();
    // Read (and remembered) by the handler just now.
    expect((await client.post(url, '', { key, kid: url })).status).toBe(200);
    await app.servers.acme.accounts.deactivateAccount(url.split('/').pop()!);
    expectProblem(await client.post(url, '', { key, kid: url }), 403, 'unauthorized');
  });

  it('ends what a deactivated account had in progress: pending orders invalid, pending authorizations deactivated', async () => {
    const { key, url } = await account();
    const ordered = await client.post(
      `${A}/new-order`,
      { identifiers: [{ type: 'dns', value: 'gone.example.com' }] },
      { key, kid: url },
    );
    expect(ordered.status).toBe(201);
    expect(ordered.body.status).toBe('pending');
    const orderId = (ordered.headers.get('location') as string).split('/').pop()!;
    const authzId = (ordered.body.authorizations[0] as string).split('/').pop()!;
    expect((await app.storage.acmeAuthorizations.get(authzId))?.status).toBe('pending');
    // Another account's pending work is not touched.
    const other = await account();
    const kept = await client.post(
      `${A}/new-order`,
      { identifiers: [{ type: 'dns', value: 'kept.example.com' }] },
      { key: other.key, kid: other.url },
    );
    const keptAuthz = (kept.body.authorizations[0] as string).split('/').pop()!;

    expect((await client.post(url, { status: 'deactivated' }, { key, kid: url })).status).toBe(200);
    expect((await app.storage.acmeAuthorizations.get(authzId))?.status).toBe('deactivated');
    expect((await app.storage.acmeOrders.get(orderId))?.status).toBe('invalid');
    expect((await app.storage.acmeAuthorizations.get(keptAuthz))?.status).toBe('pending');
    const pollOther = await client.post(kept.headers.get('location') as string, '', {
      key: other.key,
      kid: other.url,
    });
    expect(pollOther.body.status).toBe('pending');
  });

  it('lists the account’s orders with POST-as-GET', async () => {
    const { key, url } = await account();
    const answer = await client.post(`${url}/orders`, '', { key, kid: url });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ orders: [] });
  });
});

describe('ACME key change', () => {
  async function rollover(old: { key: AccountKey; url: string }, next: AccountKey, oldJwk = old.key.jwk) {
    const inner = await signJws(
      { account: old.url, oldKey: oldJwk },
      { key: next, url: `${A}/key-change`, nonce: null },
    );
    return client.post(`${A}/key-change`, inner, { key: old.key, kid: old.url });
  }

  it('swaps the account key: the new key signs, the old one no longer does', async () => {
    const acct = await account();
    const next = newAccountKey();
    const answer = await rollover(acct, next);
    expect(answer.status).toBe(200);
    expect((await client.post(acct.url, '', { key: next, kid: acct.url })).status).toBe(200);
    expectProblem(await client.post(acct.url, '', { key: acct.key, kid: acct.url }), 400, 'malformed');
  });

  it('answers 409 with the holder’s Location when the new key already has an account, changing nothing', async () => {
    const acct = await account();
    const other = await account();
    const answer = await rollover(acct, other.key);
    expect(answer.status).toBe(409);
    expect(answer.body.type).toBe(`${ERR}malformed`);
    expect(answer.headers.get('location')).toBe(other.url);
    expect((await client.post(acct.url, '', { key: acct.key, kid: acct.url })).status).toBe(200);
  });

  it('lets exactly one of two concurrent rollovers win; the account ends with the winner’s key', async () => {
    const acct = await account();
    const [a, b] = [newAccountKey(), newAccountKey()];
    const answers = await Promise.all([rollover(acct, a), rollover(acct, b)]);
    const won = answers.filter((x) => x.status === 200);
    expect(won).toHaveLength(1);
    // The loser either took the lock second (409) or was verified against the already-swapped key.
    const lost = answers.find((x) => x.status !== 200)!;
    expect([409, 400]).toContain(lost.status);
    const winner = answers[0]!.status === 200 ? a : b;
    expect((await client.post(acct.url, '', { key: winner, kid: acct.url })).status).toBe(200);
  });

  it('refuses an inner JWS whose oldKey is not the current key or whose account is another', async () => {
    const acct = await account();
    const stranger = newAccountKey();
    expectProblem(await rollover(acct, newAccountKey(), stranger.jwk), 400, 'malformed');
    const inner = await signJws(
      { account: `${A}/account/acct-other`, oldKey: acct.key.jwk },
      {
        key: newAccountKey(),
        url: `${A}/key-change`,
        nonce: null,
      },
    );
    expectProblem(
      await client.post(`${A}/key-change`, inner, { key: acct.key, kid: acct.url }),
      400,
      'malformed',
    );
    expect((await client.post(acct.url, '', { key: acct.key, kid: acct.url })).status).toBe(200);
  });
});

describe('ACME external account binding', () => {
  let pathBase: string;
  let profileId: string;
  beforeAll(async () => {
    const created = await app.call('POST', '/api/v1/profiles', {
      name: 'ACME with EAB',
      enrollment: {
        issuer_id: 'iss-local',
        owner_id: 'own-default',
        team_id: 'team-default',
        renewal_policy_id: 'rp-default',
      },
      acme: {
        enabled: true,
        path_id: 'eab',
        eab_required: true,
        terms_of_service_url: 'https://example.com/tos',
      },
    });
    profileId = created.body.id;
    pathBase = `${ORIGIN}/acme/profile/eab`;
  });

  async function eabKey() {
    const created = await app.call('POST', '/api/v1/acme/eab-keys', {
      profile_id: profileId,
      name: 'team A',
    });
    expect(created.status).toBe(201);
    return created.body as { id: string; hmac_key: string };
  }

  function binding(key: AccountKey, eab: { id: string; hmac_key: string }, url = `${pathBase}/new-account`) {
    const protectedB64 = Buffer.from(JSON.stringify({ alg: 'HS256', kid: eab.id, url })).toString(
      'base64url',
    );
    const payload = Buffer.from(JSON.stringify(key.jwk)).toString('base64url');
    const signature = createHmac('sha256', Buffer.from(eab.hmac_key, 'base64url'))
      .update(`${protectedB64}.${payload}`)
      .digest('base64url');
    return { protected: protectedB64, payload, signature };
  }

  const join = (key: AccountKey, externalAccountBinding?: unknown, terms = true) =>
    client.post(
      `${pathBase}/new-account`,
      { termsOfServiceAgreed: terms, ...(externalAccountBinding ? { externalAccountBinding } : {}) },
      { key },
    );

  it('requires a binding (externalAccountRequired) and agreement to the terms', async () => {
    const before = await accountCount();
    expectProblem(await join(newAccountKey()), 400, 'externalAccountRequired');
    const key = newAccountKey();
    expectProblem(await join(key, binding(key, await eabKey()), false), 400, 'malformed');
    expect(await accountCount()).toBe(before);
  });

  it('refuses a binding with a wrong MAC or an unknown key id, creating nothing and spending no key', async () => {
    const eab = await eabKey();
    const key = newAccountKey();
    const before = await accountCount();
    const forged = { ...binding(key, eab), signature: Buffer.alloc(32, 7).toString('base64url') };
    expectProblem(await join(key, forged), 403, 'unauthorized');
    expectProblem(await join(key, binding(key, { ...eab, id: 'eab-unknown' })), 403, 'unauthorized');
    expect(await accountCount()).toBe(before);
    expect((await app.call('GET', `/api/v1/acme/eab-keys/${eab.id}`)).body.account_id).toBeNull();
  });

  it('refuses a binding over another key than the account key', async () => {
    const key = newAccountKey();
    expectProblem(await join(key, binding(newAccountKey(), await eabKey())), 400, 'malformed');
  });

  it('binds a key to exactly one account: a second account with the same EAB key is refused', async () => {
    const eab = await eabKey();
    const key = newAccountKey();
    const created = await join(key, binding(key, eab));
    expect(created.status).toBe(201);
    const stored = await app.call('GET', `/api/v1/acme/eab-keys/${eab.id}`);
    expect(stored.body.account_id).toBe(created.headers.get('location')?.split('/').pop());
    const second = newAccountKey();
    expectProblem(await join(second, binding(second, eab)), 403, 'unauthorized');
  });

  it('shows the HMAC key only when creating it; lists and deletes keys (admin only)', async () => {
    const eab = await eabKey();
    expect(eab.hmac_key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const listed = await app.call('GET', `/api/v1/acme/eab-keys?profile_id=${profileId}`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.some((k: { id: string }) => k.id === eab.id)).toBe(true);
    expect(JSON.stringify(listed.body)).not.toContain(eab.hmac_key);
    expect((await app.call('DELETE', `/api/v1/acme/eab-keys/${eab.id}`)).status).toBe(204);
    expect((await app.call('GET', `/api/v1/acme/eab-keys/${eab.id}`)).status).toBe(404);
    const key = newAccountKey();
    expectProblem(await join(key, binding(key, eab)), 403, 'unauthorized');
  });
});
