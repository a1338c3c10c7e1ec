import { X509Certificate } from 'node:crypto';
import {
  type AcmeAccount,
  createServices,
  fail,
  isCertwrightError,
  ManualClock,
  SecretBox,
  type Services,
  SYSTEM_ACTOR,
  silentLogger,
} from '@certwright/core';
import {
  createCertificationRequest,
  exportSpkiDer,
  formatAcmeCertId,
  generateKeyPair,
  pemDecode,
  readCertificate,
} from '@certwright/core/pki';
import { createMigratedPgliteStorage } from '@certwright/storage-pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AcmeServer, createAcmeServer } from './acme-server.js';
import type { AcmeChallengeValidator } from './challenges.js';
import { AcmeOrderService } from './orders.js';
import { spkiThumbprint } from './revoke.js';
import { ACME_VALIDATION_TOPICS } from './validation-queue.js';

/**
 * The order side of the ACME server in-process (core services on PGlite, no HTTP): orders,
 * authorizations, challenge responses and their validation topic, expiry, rate limits.
 */

const clock = new ManualClock('2026-03-01T00:00:00Z');
const enqueued: { topic: string; payload: { id: string } }[] = [];
let app: {
  services: Services;
  storage: Awaited<ReturnType<typeof createMigratedPgliteStorage>>;
  acme: AcmeServer;
  close(): Promise<void>;
};
let trustProfile: string;

beforeAll(async () => {
  const storage = await createMigratedPgliteStorage({
    secretBox: new SecretBox(SecretBox.generateKey()),
    clock,
    logger: silentLogger,
  });
  const services = createServices({ storage, clock, logger: silentLogger });
  const acme = createAcmeServer(services, {
    queue: {
      async enqueue<P>(topic: string, payload: P) {
        enqueued.push({ topic, payload: payload as { id: string } });
        return `job-${enqueued.length}`;
      },
    },
  });
  app = { services, storage, acme, close: () => storage.close() };
  const profile = await app.services.profiles.create(SYSTEM_ACTOR, {
    name: 'Trusted ACME',
    allow_ip_sans: true, // orders below name IP addresses
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
  });
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

const acme = () => app.acme;
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

  it('refuses an ip identifier at new-order under a profile without allow_ip_sans, naming the address', async () => {
    const profile = await app.services.profiles.create(SYSTEM_ACTOR, { name: 'ACME without IPs' });
    const acct = await account(profile.id);
    const order = acme().orders.newOrder(acct, {
      identifiers: [
        { type: 'dns', value: 'a.example.com' },
        { type: 'ip', value: '192.0.2.9' },
      ],
    });
    await expect(order).rejects.toMatchObject({
      reason: 'name_not_allowed',
      message: expect.stringContaining('192.0.2.9'),
    });
    expect(
      await reasonOf(
        acme().orders.newOrder(acct, { identifiers: [{ type: 'dns', value: 'a.example.com' }] }),
      ),
    ).toBe('accepted');
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
    expect(await reasonOf(acme().orders.order(stranger, view.order.id))).toBe('not_found');
    expect(await reasonOf(acme().authorizations.authorization(stranger, authz.id))).toBe('not_found');
    expect(await reasonOf(acme().challenges.respondToChallenge(stranger, authz.challenges[0]!.id))).toBe(
      'not_found',
    );
    expect(await reasonOf(acme().orders.finalize(stranger, view.order.id, new Uint8Array([0x30, 0])))).toBe(
      'not_found',
    );
    expect((await acme().orders.order(owner, view.order.id)).order.id).toBe(view.order.id);
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
    const answered = await acme().challenges.respondToChallenge(acct, http.id);
    expect(answered.challenge.status).toBe('processing');
    expect(answered.retryAfterSeconds).toBeGreaterThan(0);
    expect(enqueued).toEqual([{ topic: ACME_VALIDATION_TOPICS['http-01'], payload: { id: http.id } }]);
    // Responding again changes nothing and enqueues nothing.
    expect((await acme().challenges.respondToChallenge(acct, http.id)).challenge.status).toBe('processing');
    expect(enqueued).toHaveLength(1);
    // Another challenge of the same authorization cannot start meanwhile.
    const dns = view.authorizations[0]!.challenges.find((c) => c.type === 'dns-01')!;
    expect(await reasonOf(acme().challenges.respondToChallenge(acct, dns.id))).toBe('invalid_state');
  });

  it('enqueues a lost validation again when the processing challenge is read a minute later', async () => {
    const { acct, view } = await pendingOrder(['lost.example.com']);
    const http = view.authorizations[0]!.challenges.find((c) => c.type === 'http-01')!;
    await acme().challenges.respondToChallenge(acct, http.id);
    enqueued.length = 0; // the enqueue after commit was lost
    await acme().challenges.challenge(acct, http.id);
    expect(enqueued).toEqual([]);
    clock.advance(61_000);
    try {
      await acme().authorizations.authorization(acct, view.authorizations[0]!.id);
      await acme().challenges.challenge(acct, http.id);
      expect(enqueued).toEqual([
        { topic: ACME_VALIDATION_TOPICS['http-01'], payload: { id: http.id } },
        { topic: ACME_VALIDATION_TOPICS['http-01'], payload: { id: http.id } },
      ]);
    } finally {
      clock.advance(-61_000);
    }
  });

  it('validates with the key authorization and makes the order ready once every authorization is valid', async () => {
    const { acct, view } = await pendingOrder(['a.example.com', 'b.example.com']);
    const seen: unknown[] = [];
    const validator: AcmeChallengeValidator = async (challenge) => {
      seen.push(challenge);
    };
    const [first, second] = view.authorizations.map((a) => a.challenges.find((c) => c.type === 'http-01')!);
    await acme().challenges.respondToChallenge(acct, first!.id);
    await acme().challenges.validate(first!.id, validator);
    expect(seen).toEqual([
      {
        type: 'http-01',
        identifier: { type: 'dns', value: 'a.example.com' },
        token: first!.token,
        keyAuthorization: `${first!.token}.${acct.jwk_thumbprint}`,
      },
    ]);
    expect((await acme().challenges.challenge(acct, first!.id)).challenge).toMatchObject({ status: 'valid' });
    expect((await acme().orders.order(acct, view.order.id)).order.status).toBe('pending');
    await acme().challenges.respondToChallenge(acct, second!.id);
    await acme().challenges.validate(second!.id, validator);
    const after = await acme().orders.order(acct, view.order.id);
    expect(after.order.status).toBe('ready');
    expect(after.authorizations.map((a) => a.status)).toEqual(['valid', 'valid']);
    // A second delivery of the same job changes nothing.
    await acme().challenges.validate(second!.id, async () => {
      throw new Error('must not be called again');
    });
    expect((await acme().challenges.challenge(acct, second!.id)).challenge.status).toBe('valid');
  });

  it('stores the failure class as the problem and invalidates authorization and order', async () => {
    const { acct, view } = await pendingOrder(['down.example.com', 'other.example.com']);
    const tls = view.authorizations[0]!.challenges.find((c) => c.type === 'tls-alpn-01')!;
    await acme().challenges.respondToChallenge(acct, tls.id);
    await acme().challenges.validate(tls.id, async () => {
      throw fail('tls_failed', 'the TLS handshake with 192.0.2.1:443 failed');
    });
    const { challenge } = await acme().challenges.challenge(acct, tls.id);
    expect(challenge.status).toBe('invalid');
    expect(challenge.error).toEqual({ type: 'tls', detail: 'the TLS handshake with 192.0.2.1:443 failed' });
    const order = await acme().orders.order(acct, view.order.id);
    expect(order.order.status).toBe('invalid');
    expect(order.authorizations.map((a) => a.status)).toEqual(['invalid', 'pending']);
  });

  it('keeps internal causes out of the stored problem', async () => {
    const { acct, view } = await pendingOrder(['bug.example.com']);
    const http = view.authorizations[0]!.challenges[0]!;
    await acme().challenges.respondToChallenge(acct, http.id);
    await acme().challenges.validate(http.id, async () => {
      throw new Error('ECONNRESET at /srv/secret/path.js:12');
    });
    const { challenge } = await acme().challenges.challenge(acct, http.id);
    expect(challenge.error).toEqual({ type: 'serverInternal', detail: 'internal error' });
  });

  it('leaves the challenge processing when the worker stops, so the job runs again', async () => {
    const { acct, view } = await pendingOrder(['stop.example.com']);
    const http = view.authorizations[0]!.challenges[0]!;
    await acme().challenges.respondToChallenge(acct, http.id);
    const stop = new AbortController();
    const validator: AcmeChallengeValidator = async () => {
      stop.abort();
      throw fail('timed_out', 'aborted');
    };
    expect(await reasonOf(acme().challenges.validate(http.id, validator, stop.signal))).toBe('timed_out');
    expect((await acme().challenges.challenge(acct, http.id)).challenge.status).toBe('processing');
    await acme().challenges.validate(http.id, ok);
    expect((await acme().challenges.challenge(acct, http.id)).challenge.status).toBe('valid');
  });

  it('expires pending orders and authorizations after their lifetime and refuses late responses', async () => {
    const { acct, view } = await pendingOrder(['late.example.com']);
    clock.advance(8 * 86_400_000);
    try {
      const order = await acme().orders.order(acct, view.order.id);
      expect(order.order.status).toBe('invalid');
      expect(order.authorizations[0]!.status).toBe('expired');
      expect(
        await reasonOf(acme().challenges.respondToChallenge(acct, view.authorizations[0]!.challenges[0]!.id)),
      ).toBe('invalid_state');
      expect(await reasonOf(acme().orders.finalize(acct, view.order.id, new Uint8Array([0x30, 0])))).toBe(
        'invalid_state',
      );
    } finally {
      clock.advance(-8 * 86_400_000);
    }
  });

  it('deactivates an authorization on request and invalidates its pending order', async () => {
    const { acct, view } = await pendingOrder(['gone.example.com']);
    const authz = await acme().authorizations.deactivateAuthorization(acct, view.authorizations[0]!.id);
    expect(authz.status).toBe('deactivated');
    expect((await acme().orders.order(acct, view.order.id)).order.status).toBe('invalid');
  });

  it('refuses to finalize an order that is not ready', async () => {
    const { acct, view } = await pendingOrder(['notready.example.com']);
    expect(await reasonOf(acme().orders.finalize(acct, view.order.id, new Uint8Array([0x30, 0])))).toBe(
      'invalid_state',
    );
  });
});

async function csrFor(
  names: { dns?: string[]; ip?: string[] },
  key?: Awaited<ReturnType<typeof generateKeyPair>>,
) {
  const pair = key ?? (await generateKeyPair('ECDSA-P256'));
  const sans = [
    ...(names.dns ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(names.ip ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  return {
    pair,
    der: createCertificationRequest({ subject: [], privateKey: pair.privateKey, subjectAltNames: sans }),
  };
}

/** A ready order under trust_authenticated (finalize is the point, not validation). */
async function readyOrder(identifiers: { type: 'dns' | 'ip'; value: string }[], acct?: AcmeAccount) {
  const owner = acct ?? (await account(trustProfile));
  const view = await acme().orders.newOrder(owner, { identifiers });
  expect(view.order.status).toBe('ready');
  return { acct: owner, order: view.order };
}

describe('ACME finalize and certificate download', () => {
  it('issues at once: the order is valid with its certificate, and the download is the PEM chain', async () => {
    const { acct, order } = await readyOrder([
      { type: 'dns', value: 'final.example.com' },
      { type: 'ip', value: '192.0.2.44' },
    ]);
    const { der } = await csrFor({ dns: ['final.example.com'], ip: ['192.0.2.44'] });
    const view = await acme().orders.finalize(acct, order.id, der);
    expect(view.order).toMatchObject({
      status: 'valid',
      certificate_id: expect.any(String),
      version_id: expect.any(String),
    });
    expect(view.retryAfterSeconds).toBeUndefined();
    const chain = await acme().orders.certificateChain(acct, order.id);
    const blocks = chain.pem.match(/-----BEGIN CERTIFICATE-----/g) ?? [];
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    const leaf = new X509Certificate(chain.pem);
    expect(leaf.subjectAltName).toBe('DNS:final.example.com, IP Address:192.0.2.44');
    const certificate = await app.services.certificates.get(view.order.certificate_id!);
    expect(certificate).toMatchObject({
      source: 'ACME',
      metadata: { acme_account_id: acct.id, acme_order_id: order.id },
    });
  });

  it('downloads the same chain from the finalizing instance and from another one, for the ordering account only', async () => {
    const { acct, order } = await readyOrder([{ type: 'dns', value: 'download.example.com' }]);
    const { der } = await csrFor({ dns: ['download.example.com'] });
    const view = await acme().orders.finalize(acct, order.id, der);
    // Another instance over the same storage has not finalized anything itself.
    const other = new AcmeOrderService(app.services.deps, app.services.pki.enrollment);
    const here = await acme().orders.certificateChain(acct, order.id);
    const there = await other.certificateChain(acct, order.id);
    expect(here).toEqual(there);
    expect(here.versionId).toBe(view.order.version_id);
    const stranger = await account();
    expect(await reasonOf(acme().orders.certificateChain(stranger, order.id))).toBe('not_found');
    expect(await reasonOf(other.certificateChain(stranger, order.id))).toBe('not_found');
  });

  it('issues nothing for an order another instance invalidated after this one created it ready', async () => {
    const { acct, order } = await readyOrder([{ type: 'dns', value: 'moved-on.example.com' }]);
    await app.storage.acmeOrders.update(order.id, { status: 'invalid' });
    const { der } = await csrFor({ dns: ['moved-on.example.com'] });
    expect(await reasonOf(acme().orders.finalize(acct, order.id, der))).toBe('invalid_state');
    expect(await app.storage.acmeOrders.get(order.id)).toMatchObject({ status: 'invalid', version_id: null });
    expect(await reasonOf(acme().orders.certificateChain(acct, order.id))).toBe('not_found');
  });

  it('answers a finalize of an order another instance finalized with that certificate, issuing nothing more', async () => {
    const { acct, order } = await readyOrder([{ type: 'dns', value: 'elsewhere.example.com' }]);
    const other = new AcmeOrderService(app.services.deps, app.services.pki.enrollment);
    const first = await other.finalize(
      acct,
      order.id,
      (await csrFor({ dns: ['elsewhere.example.com'] })).der,
    );
    const again = await acme().orders.finalize(
      acct,
      order.id,
      (await csrFor({ dns: ['elsewhere.example.com'] })).der,
    );
    expect(again.order).toMatchObject({ status: 'valid', version_id: first.order.version_id });
  });

  it('answers an authorization deactivated after a ready new-order as deactivated, and refuses its finalize', async () => {
    const { acct, order } = await readyOrder([{ type: 'dns', value: 'withdrawn.example.com' }]);
    const authzId = (await acme().orders.order(acct, order.id)).authorizations[0]!.id;
    await acme().authorizations.deactivateAuthorization(acct, authzId);
    expect((await acme().authorizations.authorization(acct, authzId)).status).toBe('deactivated');
    const { der } = await csrFor({ dns: ['withdrawn.example.com'] });
    expect(await reasonOf(acme().orders.finalize(acct, order.id, der))).toBe('invalid_state');
    expect(await app.storage.acmeOrders.get(order.id)).toMatchObject({ status: 'invalid', version_id: null });
  });

  it("answers a ready order's authorization as valid, and another account's as not found", async () => {
    const { acct, order } = await readyOrder([{ type: 'dns', value: 'shown.example.com' }]);
    const authzId = (await acme().orders.order(acct, order.id)).authorizations[0]!.id;
    expect(await reasonOf(acme().authorizations.authorization(await account(trustProfile), authzId))).toBe(
      'not_found',
    );
    expect(await acme().authorizations.authorization(acct, authzId)).toMatchObject({
      status: 'valid',
      identifier: { type: 'dns', value: 'shown.example.com' },
      challenges: [],
    });
    const second = await readyOrder([{ type: 'dns', value: 'shown-first.example.com' }], acct);
    const secondId = (await acme().orders.order(acct, second.order.id)).authorizations[0]!.id;
    expect((await acme().authorizations.authorization(acct, secondId)).status).toBe('valid');
    expect(await reasonOf(acme().authorizations.authorization(await account(trustProfile), secondId))).toBe(
      'not_found',
    );
  });

  it('answers a second finalize of a valid order with the same certificate, issuing nothing more', async () => {
    const { acct, order } = await readyOrder([{ type: 'dns', value: 'twice.example.com' }]);
    const first = await acme().orders.finalize(
      acct,
      order.id,
      (await csrFor({ dns: ['twice.example.com'] })).der,
    );
    const again = await acme().orders.finalize(
      acct,
      order.id,
      (await csrFor({ dns: ['twice.example.com'] })).der,
    );
    expect(again.order.version_id).toBe(first.order.version_id);
    const versions = await app.storage.versions.listForCertificate(first.order.certificate_id!);
    expect(versions.total).toBe(1);
  });

  it('issues one certificate when two finalizes of one order run at once', async () => {
    const { acct, order } = await readyOrder([{ type: 'dns', value: 'race.example.com' }]);
    const csrs = await Promise.all([0, 1].map(() => csrFor({ dns: ['race.example.com'] })));
    const results = await Promise.all(csrs.map(({ der }) => acme().orders.finalize(acct, order.id, der)));
    expect(results.map((r) => r.order.status)).toEqual(['valid', 'valid']);
    expect(results[0]!.order.version_id).toBe(results[1]!.order.version_id);
    const made = await app.storage.certificates.list({ perPage: 500 });
    expect(made.items.filter((c) => c.metadata.acme_order_id === order.id)).toHaveLength(1);
  });

  it('finalizes an order left processing by a crash, and keeps an order ready after a refused CSR', async () => {
    const { acct, order } = await readyOrder([{ type: 'dns', value: 'crash.example.com' }]);
    // The state a finalize leaves when the process dies after claiming the order.
    await app.storage.acmeOrders.update(order.id, { status: 'processing' });
    expect((await acme().orders.order(acct, order.id)).retryAfterSeconds).toBeGreaterThan(0);
    const extra = await csrFor({ dns: ['crash.example.com', 'extra.example.com'] });
    expect(await reasonOf(acme().orders.finalize(acct, order.id, extra.der))).toBe('names_mismatch');
    expect((await acme().orders.order(acct, order.id)).order.status).toBe('ready');
    const missing = await csrFor({ dns: [], ip: ['192.0.2.1'] });
    expect(await reasonOf(acme().orders.finalize(acct, order.id, missing.der))).toBe('names_mismatch');
    const good = await csrFor({ dns: ['crash.example.com'] });
    expect((await acme().orders.finalize(acct, order.id, good.der)).order.status).toBe('valid');
  });

  it('refuses a small RSA key and an unparsable CSR without consuming the order', async () => {
    const { acct, order } = await readyOrder([{ type: 'dns', value: 'weak.example.com' }]);
    expect(
      await reasonOf(acme().orders.finalize(acct, order.id, new Uint8Array([0x30, 0x03, 1, 2, 3]))),
    ).toMatch(/malformed|csr_malformed/);
    const { generateKeyPairSync } = await import('node:crypto');
    const weak = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const der = createCertificationRequest({
      subject: [],
      privateKey: weak.privateKey,
      subjectAltNames: [{ type: 'dns', value: 'weak.example.com' }],
    });
    expect(await reasonOf(acme().orders.finalize(acct, order.id, der))).toBe('key_rejected');
    expect((await acme().orders.order(acct, order.id)).order.status).toBe('ready');
  });
});

function firstCertificate(pem: string): Uint8Array {
  const end = '-----END CERTIFICATE-----';
  return pemDecode(`${pem.slice(0, pem.indexOf(end) + end.length)}\n`, 'CERTIFICATE');
}

describe('ACME revocation and renewal information', () => {
  async function issued(name: string) {
    const { acct, order } = await readyOrder([{ type: 'dns', value: name }]);
    const { pair, der } = await csrFor({ dns: [name] });
    const view = await acme().orders.finalize(acct, order.id, der);
    const chain = await acme().orders.certificateChain(acct, order.id);
    return {
      acct,
      order: view.order,
      pair,
      leafDer: firstCertificate(chain.pem),
      issuerDer: firstCertificate(chain.issuerChainPem),
    };
  }

  it('revokes for the account that ordered it, through the revocation pipeline, once', async () => {
    const { acct, order, leafDer } = await issued('revoke.example.com');
    const stranger = await account(trustProfile);
    expect(await reasonOf(acme().revocation.revoke({ certificateDer: leafDer }, { account: stranger }))).toBe(
      'not_permitted',
    );
    await acme().revocation.revoke({ certificateDer: leafDer, reason: 10 }, { account: acct });
    const version = await app.storage.versions.get(order.version_id!);
    expect(version).toMatchObject({ revocation_reason: 'unspecified', revoked_at: expect.any(Date) });
    expect((await app.services.certificates.get(order.certificate_id!)).status).toBe('Revoked');
    expect(await reasonOf(acme().revocation.revoke({ certificateDer: leafDer }, { account: acct }))).toBe(
      'already_revoked',
    );
  });

  it('revokes for the holder of the certificate key (RFC 7638 thumbprint) and no other key', async () => {
    const { order, pair, leafDer } = await issued('keyholder.example.com');
    const other = await generateKeyPair('ECDSA-P256');
    expect(
      await reasonOf(
        acme().revocation.revoke(
          { certificateDer: leafDer },
          { jwkThumbprint: spkiThumbprint(exportSpkiDer(other.publicKey)) },
        ),
      ),
    ).toBe('not_permitted');
    await acme().revocation.revoke(
      { certificateDer: leafDer, reason: 1 },
      { jwkThumbprint: spkiThumbprint(exportSpkiDer(pair.publicKey)) },
    );
    expect(await app.storage.versions.get(order.version_id!)).toMatchObject({
      revocation_reason: 'keyCompromise',
    });
  });

  it('suggests a renewal window for an issued certificate by its certID and renews it through replaces', async () => {
    const { acct, order, leafDer, issuerDer } = await issued('ari.example.com');
    const info = readCertificate(leafDer);
    const aki = readCertificate(issuerDer).keyIdentifier;
    const certId = formatAcmeCertId(aki, info.serialNumber);
    const window = await acme().renewalInfo(certId);
    expect(window.suggestedWindow.start.getTime()).toBeLessThan(window.suggestedWindow.end.getTime());
    expect(window.suggestedWindow.end.getTime()).toBeLessThanOrEqual(info.notAfter.getTime());
    expect(await reasonOf(acme().renewalInfo(`${Buffer.from(aki).toString('base64url')}.AQ`))).toBe(
      'not_found',
    );

    const stranger = await account(trustProfile);
    expect(
      await reasonOf(
        acme().orders.newOrder(stranger, {
          identifiers: [{ type: 'dns', value: 'ari.example.com' }],
          replaces: certId,
        }),
      ),
    ).toBe('invalid_input');
    const renewal = await acme().orders.newOrder(acct, {
      identifiers: [{ type: 'dns', value: 'ari.example.com' }],
      replaces: certId,
    });
    const done = await acme().orders.finalize(
      acct,
      renewal.order.id,
      (await csrFor({ dns: ['ari.example.com'] })).der,
    );
    expect(done.order.certificate_id).toBe(order.certificate_id);
    expect(done.order.version_id).not.toBe(order.version_id);
    // The certificate was replaced: naming the old version again is alreadyReplaced (an hour
    // later, past the profile's two orders an hour).
    clock.advance(3_600_000);
    try {
      await acme().orders.newOrder(acct, {
        identifiers: [{ type: 'dns', value: 'ari.example.com' }],
        replaces: certId,
      });
      expect.unreachable();
    } catch (error) {
      expect(isCertwrightError(error) && error.extra.acme_problem).toBe('alreadyReplaced');
    } finally {
      clock.advance(-3_600_000);
    }
    // The replaced version alone can be revoked; the renewal stays in force.
    await acme().revocation.revoke({ certificateDer: leafDer, reason: 4 }, { account: acct });
    expect((await app.services.certificates.get(order.certificate_id!)).status).not.toBe('Revoked');
    expect((await app.storage.versions.get(order.version_id!))?.revocation_reason).toBe('superseded');
  });
});
