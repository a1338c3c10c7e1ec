import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTempDatabase, postgresSkipReason } from '../../storage-pg/test/helpers.js';
import { httpsCall } from './support/https.js';
import { redisServerSkipReason } from './support/private-services.js';
import { type Cluster, startCluster } from './support/scale.js';

const skip = (await postgresSkipReason()) ?? redisServerSkipReason();
if (skip) console.warn(`skipping the instance-kill fault test: ${skip}`);

/** Polls for up to two minutes: a ceiling for a loaded machine, not a timing assertion. */
async function waitFor(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * One of three instances is SIGKILLed while certificates it may be issuing are in flight: the
 * balancer skips it, the survivors take over its scheduler leases and any job it held, and every
 * acknowledged certificate is issued exactly once.
 */
describe.skipIf(skip !== undefined)('an instance killed mid-load', () => {
  let database: Awaited<ReturnType<typeof createTempDatabase>>;
  let cluster: Cluster;

  beforeAll(async () => {
    database = await createTempDatabase();
    cluster = await startCluster({ instances: 3, databaseUrl: database.url });
  });
  afterAll(async () => {
    await cluster?.stop();
    await database?.drop();
  });

  it('loses no acknowledged certificate and issues each once', async () => {
    const { call, ca, servers } = cluster;
    const [owner, team, issuer] = await Promise.all([
      call('POST', '/api/v1/owners', { name: 'Alice', email: 'alice@example.com' }),
      call('POST', '/api/v1/teams', { name: 'Platform' }),
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
    for (const server of servers.slice(1)) {
      expect((await httpsCall(server.port, ca, '/ready')).status).toBe(200);
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
