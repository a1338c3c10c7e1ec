import { createServices, type Storage, silentLogger } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler } from '../src/index.js';
import { type References, seedReferences } from './support/inventory-fixtures.js';
import { createTestApp, TEST_API_KEY, type TestApp } from './support/test-app.js';

let app: TestApp;
let refs: References;

beforeAll(async () => {
  app = await createTestApp();
  refs = await seedReferences(app);
});
afterAll(() => app.close());

/**
 * The same storage, except that inside transactions the `failOn`-th call of
 * certificates.updateMany throws as a lost connection would — after earlier batches were
 * written in the same transaction.
 */
function failingStorage(storage: Storage, failOn: number): Storage {
  let calls = 0;
  const wrapTx = (tx: Storage): Storage =>
    new Proxy(tx, {
      get(target, prop, receiver) {
        if (prop === 'certificates') {
          return new Proxy(target.certificates, {
            get(repo, name, r) {
              if (name !== 'updateMany') return Reflect.get(repo, name, r);
              return async (...args: Parameters<typeof repo.updateMany>) => {
                calls += 1;
                if (calls === failOn) throw new Error('connection lost mid-bulk');
                return repo.updateMany(...args);
              };
            },
          });
        }
        if (prop === 'transaction')
          return <T>(fn: (t: Storage) => Promise<T>) => target.transaction((t) => fn(wrapTx(t)));
        return Reflect.get(target, prop, receiver);
      },
    });
  return new Proxy(storage, {
    get(target, prop, receiver) {
      if (prop === 'transaction')
        return <T>(fn: (t: Storage) => Promise<T>) => target.transaction((t) => fn(wrapTx(t)));
      return Reflect.get(target, prop, receiver);
    },
  });
}

describe('a bulk call that fails part-way', () => {
  it('writes nothing: no certificate, version, job or audit event changes', async () => {
    const owner = (await app.call('POST', '/api/v1/owners', { name: 'atomic' })).body.id as string;
    await app.storage.transaction(async (tx) => {
      for (let i = 0; i < 1100; i += 1) {
        const c = await tx.certificates.create({
          name: `atomic-${i}`,
          common_name: `atomic-${i}.example.com`,
          renewal_policy_id: refs.policy,
          issuer_id: refs.issuer,
          owner_id: owner,
          team_id: refs.team,
          status: 'Active',
        });
        await tx.versions.create({
          certificate_id: c.id,
          issuer_id: refs.issuer,
          serial_number: (0xa000 + i).toString(16),
          fingerprint_sha256: (0xa000 + i).toString(16).padStart(64, '0'),
          key_algorithm: 'ECDSA',
          key_size: 256,
          subject: `CN=atomic-${i}`,
          issued_at: app.clock.now(),
          not_before: app.clock.now(),
          not_after: new Date('2026-09-01T00:00:00Z'),
          csr_pem: null,
          cert_pem: 'pem',
          chain_pem: '',
        });
      }
    });
    // The third batch of 500 fails, after two batches were written inside the transaction.
    // Each call gets fresh services, so each one fails at its own third batch.
    const post = (path: string, body: unknown) => {
      const storage = failingStorage(app.storage, 3);
      const services = createServices({ storage, clock: app.clock, logger: silentLogger });
      const handler = createHandler({ auth: { type: 'api-key', secret: TEST_API_KEY }, services });
      return handler(
        new Request(`https://localhost:8443${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TEST_API_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
        { remoteAddress: '127.0.0.1' },
      );
    };
    const auditBefore = (await app.storage.audit.head())?.seq;
    const jobsBefore = (await app.storage.jobs.list({ perPage: 1 })).total;

    const revoke = await post('/api/v1/certificates/bulk-revoke', {
      owner_id: owner,
      reason: 'keyCompromise',
    });
    expect(revoke.status).toBe(500);
    const renew = await post('/api/v1/certificates/bulk-renew', { owner_id: owner });
    expect(renew.status).toBe(500);

    // Counted exactly through storage: list totals above 1,000 are estimates.
    expect(await app.storage.certificates.count({ owner_id: owner, status: 'Active' })).toEqual({
      total: 1100,
      estimated: false,
    });
    const revokedVersions = await app.storage.db
      .selectFrom('certificate_versions')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('revoked_at', 'is not', null)
      .executeTakeFirstOrThrow();
    expect(Number(revokedVersions.n)).toBe(0);
    expect((await app.storage.jobs.list({ perPage: 1 })).total).toBe(jobsBefore);
    expect((await app.storage.audit.head())?.seq).toBe(auditBefore);
    // The same call on the intact services succeeds, so the failure above was the injected one.
    const ok = await app.call('POST', '/api/v1/certificates/bulk-revoke', { owner_id: owner });
    expect(ok.body.total_revoked).toBe(1100);
  }, 60_000);
});
