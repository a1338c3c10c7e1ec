import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTempDatabase, postgresSkipReason } from '../../storage-pg/test/helpers.js';
import { httpsCall } from './support/https.js';
import { redisServerSkipReason } from './support/private-services.js';
import { AcmeKey, acmeNonce, acmePost, type Cluster, ocspStatusAt, startCluster } from './support/scale.js';

const skip = (await postgresSkipReason()) ?? redisServerSkipReason();
if (skip) console.warn(`skipping the scale-out test: ${skip}`);

/** Polls for up to two minutes: a ceiling for a loaded machine, not a timing assertion. */
async function waitFor(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const PUBLIC_LIMIT = 9;

/**
 * Three server processes on one PostgreSQL database and one Redis, behind a round-robin TCP
 * balancer (docs/operations/scaling.md).
 */
describe.skipIf(skip !== undefined)('three instances behind a load balancer', () => {
  let database: Awaited<ReturnType<typeof createTempDatabase>>;
  let cluster: Cluster;

  beforeAll(async () => {
    database = await createTempDatabase();
    cluster = await startCluster({
      instances: 3,
      databaseUrl: database.url,
      // A small public budget the rate-limit case below spends; nothing else calls public routes.
      env: { SVC_RATE_LIMIT_PUBLIC: String(PUBLIC_LIMIT), SVC_RATE_LIMIT_WINDOW: '10m' },
    });
  });
  afterAll(async () => {
    await cluster?.stop();
    await database?.drop();
  });

  it('spreads REST load, issues each certificate once, and every OCSP sees a revocation before revoke returns', async () => {
    const { call, ca, servers } = cluster;
    const [owner, team, issuer] = await Promise.all([
      call('POST', '/api/v1/owners', { name: 'Alice', email: 'alice@example.com' }),
      call('POST', '/api/v1/teams', { name: 'Platform' }),
      call('POST', '/api/v1/issuers', { name: 'Scale CA', type: 'Local' }),
    ]);
    expect([owner.status, team.status, issuer.status]).toEqual([201, 201, 201]);
    const created = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        call('POST', '/api/v1/certificates', {
          name: `web-${i}`,
          common_name: `web-${i}.example.com`,
          sans: [`web-${i}.example.com`],
          renewal_policy_id: 'rp-default',
          issuer_id: issuer.json.id,
          owner_id: owner.json.id,
          team_id: team.json.id,
          profile_id: 'prof-default',
        }),
      ),
    );
    expect(created.map((c) => c.status)).toEqual(Array(6).fill(201));
    const ids = created.map((c) => c.json.id as string);
    // The issuance worker runs on whichever instance holds its lease, once per tick.
    for (const id of ids) {
      await waitFor(
        async () => (await call('GET', `/api/v1/certificates/${id}`)).json.status === 'Active',
        `certificate ${id} to become Active`,
      );
    }
    // Every connection went through the balancer round-robin: each instance took a share.
    for (const server of servers) expect(cluster.balancer.counts.get(server.port) ?? 0).toBeGreaterThan(0);

    // No issuance ran twice: one version per certificate.
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        'select certificate_id, count(*)::int as n from certificate_versions where certificate_id = any($1) group by certificate_id',
        [ids],
      );
      expect(rows).toHaveLength(ids.length);
      expect(rows.every((r) => r.n === 1)).toBe(true);
    } finally {
      await client.end();
    }

    for (const id of ids.slice(0, 3)) {
      const key = await call('GET', `/api/v1/certificates/${id}/key-data`);
      const serial = key.json.serial_number as string;
      // Warm every instance's OCSP cache with a "good" answer first.
      for (const server of servers) {
        expect(await ocspStatusAt(server.port, ca, issuer.json.id, serial)).toBe('good');
      }
      const revoked = await call('POST', `/api/v1/certificates/${id}/revoke`, { reason: 'keyCompromise' });
      expect(revoked.status).toBe(200);
      // Read right after revoke returned, with no wait: each instance answers "revoked".
      const statuses = await Promise.all(
        servers.map((server) => ocspStatusAt(server.port, ca, issuer.json.id, serial)),
      );
      expect(statuses).toEqual(servers.map(() => 'revoked'));
    }
  });

  it('shares ACME nonces: one issued by an instance is good at another, and once used is refused by all', async () => {
    const { ca, servers, baseUrl } = cluster;
    const [a, b, c] = servers.map((s) => s.port) as [number, number, number];
    const key = new AcmeKey();
    const url = `${baseUrl}/acme/new-account`;
    const nonce = await acmeNonce(a, ca);
    const jws = key.jws({ termsOfServiceAgreed: true }, { url, nonce });
    const first = await acmePost(b, ca, '/acme/new-account', jws);
    expect(first.status).toBe(201);
    for (const port of [c, a, b]) {
      const replay = await acmePost(port, ca, '/acme/new-account', jws);
      expect(replay.status).toBe(400);
      expect(replay.json.type).toBe('urn:ietf:params:acme:error:badNonce');
    }
    // A fresh nonce from the error answer still works elsewhere: the store is shared, not broken.
    const again = key.jws({ termsOfServiceAgreed: true }, { url, nonce: await acmeNonce(c, ca) });
    expect((await acmePost(a, ca, '/acme/new-account', again)).status).toBe(200);
  });

  it('shares rate limits: the budget spent on one instance is gone on the others', async () => {
    const { ca, servers } = cluster;
    const replies = [];
    for (let i = 0; i < PUBLIC_LIMIT; i++) {
      const port = servers[i % servers.length]!.port;
      replies.push((await httpsCall(port, ca, '/api/v1/version')).status);
    }
    expect(replies).toEqual(Array(PUBLIC_LIMIT).fill(200));
    // Each instance alone saw a third of the budget; together they spent all of it.
    for (const server of servers) {
      const refused = await httpsCall(server.port, ca, '/api/v1/version');
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBeDefined();
    }
  });

  it('survives an instance SIGKILLed mid-load: no acknowledged certificate lost, each issued once', async () => {
    const { call, servers } = cluster;
    const [owner, team, issuer] = await Promise.all([
      call('POST', '/api/v1/owners', { name: 'Bob', email: 'bob@example.com' }),
      call('POST', '/api/v1/teams', { name: 'Edge' }),
      call('POST', '/api/v1/issuers', { name: 'Kill CA', type: 'Local' }),
    ]);
    const create = (i: number) =>
      call('POST', '/api/v1/certificates', {
        name: `k-${i}`,
        common_name: `k-${i}.example.com`,
        sans: [`k-${i}.example.com`],
        renewal_policy_id: 'rp-default',
        issuer_id: issuer.json.id,
        owner_id: owner.json.id,
        team_id: team.json.id,
        profile_id: 'prof-default',
      });
    const before = await Promise.all([0, 1, 2, 3, 4, 5].map(create));
    expect(before.map((r) => r.status)).toEqual(Array(6).fill(201));
    // Last in this file: the cluster runs on two instances afterwards.
    // Killed while the issuance worker (on whichever instance holds its lease) works on them.
    const victim = servers[0]!;
    victim.child.kill('SIGKILL');
    await victim.exited;
    const after = await Promise.all([6, 7, 8].map(create));
    expect(after.map((r) => r.status)).toEqual(Array(3).fill(201));
    const ids = [...before, ...after].map((r) => r.json.id as string);

    for (const id of ids) {
      await waitFor(
        async () => (await call('GET', `/api/v1/certificates/${id}`)).json.status === 'Active',
        `certificate ${id} to become Active after the kill`,
      );
    }
    // The survivors serve on their own (the public budget /ready spends is used up above).
    for (const server of servers.slice(1)) {
      expect((await call('GET', `/api/v1/certificates/${ids[0]}`, undefined, server.port)).status).toBe(200);
    }
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        'select certificate_id, count(*)::int as n from certificate_versions where certificate_id = any($1) group by certificate_id',
        [ids],
      );
      expect(rows).toHaveLength(ids.length);
      expect(rows.every((r) => r.n === 1)).toBe(true);
    } finally {
      await client.end();
    }
  });
});
