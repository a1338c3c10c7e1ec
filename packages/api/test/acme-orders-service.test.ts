import {
  ACME_VALIDATION_TOPICS,
  type AcmeAccount,
  type AcmeChallengeValidator,
  fail,
  isCertwrightError,
  ManualClock,
  SYSTEM_ACTOR,
} from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * The order side of the ACME server in-process (services on PGlite, no HTTP): orders,
 * authorizations, challenge responses and their validation topic, expiry, rate limits.
 */

const clock = new ManualClock('2026-03-01T00:00:00Z');
const enqueued: { topic: string; payload: { id: string } }[] = [];
let app: TestApp;
let trustProfile: string;

beforeAll(async () => {
  app = await createTestApp({
    clock,
    services: {
      acme: {
        queue: {
          async enqueue<P>(topic: string, payload: P) {
            enqueued.push({ topic, payload: payload as { id: string } });
            return `job-${enqueued.length}`;
          },
        },
      },
    },
  });
  const profile = await app.services.profiles.create(
    {
      name: 'Trusted ACME',
      enrollment: {
        issuer_id: 'iss-local',
        owner_id: 'own-default',
        team_id: 'team-default',
        renewal_policy_id: 'rp-default',
      },
      acme: {
        enabled: true,
        auth_mode: 'trust_authenticated',
        path_id: 'trusted',
        rate_limits: { orders_per_account_per_hour: 2 },
      },
    },
    SYSTEM_ACTOR,
  );
  trustProfile = profile.id;
}, 180_000);
afterAll(() => app?.close());

let accounts = 0;
async function account(profileId = 'prof-default'): Promise<AcmeAccount> {
  accounts += 1;
  return app.storage.acmeAccounts.create({
    profile_id: profileId,
    status: 'valid',
    jwk: { kty: 'OKP', crv: 'Ed25519', x: `key-${accounts}` },
    jwk_thumbprint: `thumbprint-${accounts}`,
    contact: [],
    terms_agreed: true,
    eab_key_id: null,
    created_ip: null,
  });
}

async function reasonOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'accepted';
  } catch (error) {
    return isCertwrightError(error) ? error.reason : `untyped: ${String(error)}`;
  }
}

const acme = () => app.services.acmeOrders;
const ok: AcmeChallengeValidator = async () => {};

describe('ACME new orders', () => {
  it('creates a pending order with one pending authorization per identifier and its challenges', async () => {
    const acct = await account();
    const view = await acme().orders.newOrder(acct, {
      identifiers: [
        { type: 'dns', value: 'WWW.example.com' },
        { type: 'dns', value: '*.example.com' },
        { type: 'ip', value: '192.0.2.10' },
      ],
    });
    expect(view.order.status).toBe('pending');
    expect(view.order.identifiers).toEqual([
      { type: 'dns', value: 'www.example.com' },
      { type: 'dns', value: '*.example.com' },
      { type: 'ip', value: '192.0.2.10' },
    ]);
    expect(view.retryAfterSeconds).toBeGreaterThan(0);
    const [www, wild, ip] = view.authorizations;
    expect(www!.challenges.map((c) => c.type)).toEqual(['http-01', 'dns-01', 'tls-alpn-01']);
    expect(wild).toMatchObject({ identifier: { type: 'dns', value: 'example.com' }, wildcard: true });
    expect(wild!.challenges.map((c) => c.type)).toEqual(['dns-01']);
    expect(ip!.challenges.map((c) => c.type)).toEqual(['http-01', 'tls-alpn-01']);
    for (const c of view.authorizations.flatMap((a) => a.challenges)) {
      expect(Buffer.from(c.token, 'base64url')).toHaveLength(16);
    }
    expect(new Set(view.authorizations.flatMap((a) => a.challenges.map((c) => c.token))).size).toBe(6);
  });

  it('starts authorizations valid and the order ready under trust_authenticated', async () => {
    const acct = await account(trustProfile);
    const view = await acme().orders.newOrder(acct, {
      identifiers: [{ type: 'dns', value: 'svc.internal.test' }],
    });
    expect(view.order.status).toBe('ready');
    expect(view.authorizations.map((a) => a.status)).toEqual(['valid']);
    expect(view.retryAfterSeconds).toBeUndefined();
  });

  it('refuses names that can never be certified and validity beyond the profile', async () => {
    const acct = await account();
    expect(
      await reasonOf(acme().orders.newOrder(acct, { identifiers: [{ type: 'dns', value: '*.com' }] })),
    ).toBe('name_rejected');
    expect(await reasonOf(acme().orders.newOrder(acct, { identifiers: [] }))).toBe('invalid_input');
    const tooLong = new Date(clock.now().getTime() + 4000 * 86_400_000).toISOString();
    expect(
      await reasonOf(
        acme().orders.newOrder(acct, {
          identifiers: [{ type: 'dns', value: 'a.example.com' }],
          notAfter: tooLong,
        }),
      ),
    ).toBe('validity_not_allowed');
    expect(
      await reasonOf(
        acme().orders.newOrder(acct, {
          identifiers: [{ type: 'dns', value: 'a.example.com' }],
          profile: 'nope',
        }),
      ),
    ).toBe('invalid_input');
  });

  it('accepts the directory profile name and refuses replaces naming no certificate of the account', async () => {
    const acct = await account();
    const named = await acme().orders.newOrder(acct, {
      identifiers: [{ type: 'dns', value: 'p.example.com' }],
      profile: 'prof-default',
    });
    expect(named.order.acme_profile).toBe('prof-default');
    expect(
      await reasonOf(
        acme().orders.newOrder(acct, {
          identifiers: [{ type: 'dns', value: 'p.example.com' }],
          replaces: 'aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE',
        }),
      ),
    ).toBe('invalid_input');
  });

  it('limits new orders per account per hour and says when to come back', async () => {
    const acct = await account(trustProfile);
    const other = await account(trustProfile);
    const order = { identifiers: [{ type: 'dns', value: 'limit.example.com' }] };
    await acme().orders.newOrder(acct, order);
    await acme().orders.newOrder(acct, order);
    try {
      await acme().orders.newOrder(acct, order);
      expect.unreachable();
    } catch (error) {
      expect(isCertwrightError(error) && error.reason).toBe('rate_limited');
      expect((error as { extra: { retry_after_seconds: number } }).extra.retry_after_seconds).toBeGreaterThan(
        0,
      );
    }
    // Another account's budget is its own.
    expect((await acme().orders.newOrder(other, order)).order.status).toBe('ready');
  });
});

describe('ACME objects belong to their account', () => {
  it("answers another account's order, authorization and challenge as not found", async () => {
    const owner = await account();
    const stranger = await account();
    const view = await acme().orders.newOrder(owner, {
      identifiers: [{ type: 'dns', value: 'mine.example.com' }],
    });
    const authz = view.authorizations[0]!;
    expect(await reasonOf(acme().orders.getOrder(stranger, view.order.id))).toBe('not_found');
    expect(await reasonOf(acme().authorizations.get(stranger, authz.id))).toBe('not_found');
    expect(await reasonOf(acme().challenges.respond(stranger, authz.challenges[0]!.id))).toBe('not_found');
    expect(await reasonOf(acme().orders.finalize(stranger, view.order.id, new Uint8Array([0x30, 0])))).toBe(
      'not_found',
    );
    expect((await acme().orders.getOrder(owner, view.order.id)).order.id).toBe(view.order.id);
  });
});

describe('ACME challenge validation', () => {
  async function pendingOrder(names: string[]) {
    const acct = await account();
    const view = await acme().orders.newOrder(acct, {
      identifiers: names.map((value) => ({ type: 'dns' as const, value })),
    });
    return { acct, view };
  }

  it('moves a responded challenge to processing and enqueues its type topic with the challenge id', async () => {
    const { acct, view } = await pendingOrder(['http.example.com']);
    const http = view.authorizations[0]!.challenges.find((c) => c.type === 'http-01')!;
    enqueued.length = 0;
    const answered = await acme().challenges.respond(acct, http.id);
    expect(answered.challenge.status).toBe('processing');
    expect(answered.retryAfterSeconds).toBeGreaterThan(0);
    expect(enqueued).toEqual([{ topic: ACME_VALIDATION_TOPICS['http-01'], payload: { id: http.id } }]);
    // Responding again changes nothing and enqueues nothing.
    expect((await acme().challenges.respond(acct, http.id)).challenge.status).toBe('processing');
    expect(enqueued).toHaveLength(1);
    // Another challenge of the same authorization cannot start meanwhile.
    const dns = view.authorizations[0]!.challenges.find((c) => c.type === 'dns-01')!;
    expect(await reasonOf(acme().challenges.respond(acct, dns.id))).toBe('invalid_state');
  });

  it('validates with the key authorization and makes the order ready once every authorization is valid', async () => {
    const { acct, view } = await pendingOrder(['a.example.com', 'b.example.com']);
    const seen: unknown[] = [];
    const validator: AcmeChallengeValidator = async (challenge) => {
      seen.push(challenge);
    };
    const [first, second] = view.authorizations.map((a) => a.challenges.find((c) => c.type === 'http-01')!);
    await acme().challenges.respond(acct, first!.id);
    await acme().challenges.validate(first!.id, validator);
    expect(seen).toEqual([
      {
        type: 'http-01',
        identifier: { type: 'dns', value: 'a.example.com' },
        token: first!.token,
        keyAuthorization: `${first!.token}.${acct.jwk_thumbprint}`,
      },
    ]);
    expect((await acme().challenges.get(acct, first!.id)).challenge).toMatchObject({ status: 'valid' });
    expect((await acme().orders.getOrder(acct, view.order.id)).order.status).toBe('pending');
    await acme().challenges.respond(acct, second!.id);
    await acme().challenges.validate(second!.id, validator);
    const after = await acme().orders.getOrder(acct, view.order.id);
    expect(after.order.status).toBe('ready');
    expect(after.authorizations.map((a) => a.status)).toEqual(['valid', 'valid']);
    // A second delivery of the same job changes nothing.
    await acme().challenges.validate(second!.id, async () => {
      throw new Error('must not be called again');
    });
    expect((await acme().challenges.get(acct, second!.id)).challenge.status).toBe('valid');
  });

  it('stores the failure class as the problem and invalidates authorization and order', async () => {
    const { acct, view } = await pendingOrder(['down.example.com', 'other.example.com']);
    const tls = view.authorizations[0]!.challenges.find((c) => c.type === 'tls-alpn-01')!;
    await acme().challenges.respond(acct, tls.id);
    await acme().challenges.validate(tls.id, async () => {
      throw fail('tls_failed', 'the TLS handshake with 192.0.2.1:443 failed');
    });
    const { challenge } = await acme().challenges.get(acct, tls.id);
    expect(challenge.status).toBe('invalid');
    expect(challenge.error).toEqual({ type: 'tls', detail: 'the TLS handshake with 192.0.2.1:443 failed' });
    const order = await acme().orders.getOrder(acct, view.order.id);
    expect(order.order.status).toBe('invalid');
    expect(order.authorizations.map((a) => a.status)).toEqual(['invalid', 'pending']);
  });

  it('keeps internal causes out of the stored problem', async () => {
    const { acct, view } = await pendingOrder(['bug.example.com']);
    const http = view.authorizations[0]!.challenges[0]!;
    await acme().challenges.respond(acct, http.id);
    await acme().challenges.validate(http.id, async () => {
      throw new Error('ECONNRESET at /srv/secret/path.js:12');
    });
    const { challenge } = await acme().challenges.get(acct, http.id);
    expect(challenge.error).toEqual({ type: 'serverInternal', detail: 'internal error' });
  });

  it('leaves the challenge processing when the worker stops, so the job runs again', async () => {
    const { acct, view } = await pendingOrder(['stop.example.com']);
    const http = view.authorizations[0]!.challenges[0]!;
    await acme().challenges.respond(acct, http.id);
    const stop = new AbortController();
    const validator: AcmeChallengeValidator = async () => {
      stop.abort();
      throw fail('timed_out', 'aborted');
    };
    expect(await reasonOf(acme().challenges.validate(http.id, validator, stop.signal))).toBe('timed_out');
    expect((await acme().challenges.get(acct, http.id)).challenge.status).toBe('processing');
    await acme().challenges.validate(http.id, ok);
    expect((await acme().challenges.get(acct, http.id)).challenge.status).toBe('valid');
  });

  it('expires pending orders and authorizations after their lifetime and refuses late responses', async () => {
    const { acct, view } = await pendingOrder(['late.example.com']);
    clock.advance(8 * 86_400_000);
    try {
      const order = await acme().orders.getOrder(acct, view.order.id);
      expect(order.order.status).toBe('invalid');
      expect(order.authorizations[0]!.status).toBe('expired');
      expect(await reasonOf(acme().challenges.respond(acct, view.authorizations[0]!.challenges[0]!.id))).toBe(
        'invalid_state',
      );
      expect(await reasonOf(acme().orders.finalize(acct, view.order.id, new Uint8Array([0x30, 0])))).toBe(
        'invalid_state',
      );
    } finally {
      clock.advance(-8 * 86_400_000);
    }
  });

  it('deactivates an authorization on request and invalidates its pending order', async () => {
    const { acct, view } = await pendingOrder(['gone.example.com']);
    const authz = await acme().authorizations.deactivate(acct, view.authorizations[0]!.id);
    expect(authz.status).toBe('deactivated');
    expect((await acme().orders.getOrder(acct, view.order.id)).order.status).toBe('invalid');
  });

  it('refuses to finalize an order that is not ready', async () => {
    const { acct, view } = await pendingOrder(['notready.example.com']);
    expect(await reasonOf(acme().orders.finalize(acct, view.order.id, new Uint8Array([0x30, 0])))).toBe(
      'invalid_state',
    );
  });
});
