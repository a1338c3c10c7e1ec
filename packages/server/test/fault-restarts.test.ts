import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpsCall } from './support/https.js';
import {
  type PrivatePostgres,
  privatePostgresSkipReason,
  redisServerSkipReason,
  startPrivatePostgres,
} from './support/private-services.js';
import { type Cluster, startCluster } from './support/scale.js';

const skip = redisServerSkipReason() ?? privatePostgresSkipReason();
if (skip) console.warn(`skipping the restart fault test: ${skip}`);

/** Polls for up to two minutes: a ceiling for a loaded machine, not a timing assertion. */
async function waitFor(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * Redis, then PostgreSQL, restarted under load on three instances (private services; the
 * machine's shared ones are never touched): the instances recover without a restart and every
 * acknowledged write is in the database and issued.
 */
describe.skipIf(skip !== undefined)('Redis and PostgreSQL restarted mid-load', () => {
  let pg: PrivatePostgres;
  let cluster: Cluster;

  beforeAll(async () => {
    pg = await startPrivatePostgres();
    cluster = await startCluster({ instances: 3, databaseUrl: pg.url });
  });
  afterAll(async () => {
    await cluster?.stop();
    await pg?.destroy();
  });

  it('recovers without a restart and loses no acknowledged certificate', async () => {
    const { call, ca, servers } = cluster;
    const [owner, team, issuer] = await Promise.all([
      call('POST', '/api/v1/owners', { name: 'Alice', email: 'alice@example.com' }),
      call('POST', '/api/v1/teams', { name: 'Platform' }),
      call('POST', '/api/v1/issuers', { name: 'Restart CA', type: 'Local' }),
    ]);
    const acknowledged: string[] = [];
    const statuses: number[] = [];
    let n = 0;
    let loading = true;
    const load = (async () => {
      while (loading) {
        const i = n++;
        try {
          const reply = await call('POST', '/api/v1/certificates', {
            name: `r-${i}`,
            common_name: `r-${i}.example.com`,
            sans: [`r-${i}.example.com`],
            renewal_policy_id: 'rp-default',
            issuer_id: issuer.json.id,
            owner_id: owner.json.id,
            team_id: team.json.id,
            profile_id: 'prof-default',
          });
          statuses.push(reply.status);
          if (reply.status === 201) acknowledged.push(reply.json.id);
        } catch {
          statuses.push(0);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const pids = servers.map((s) => s.child.pid);
    await waitFor(() => acknowledged.length >= 3, 'load to start');

    await cluster.redis.stop();
    await waitFor(
      async () => (await httpsCall(servers[0]!.port, ca, '/ready')).status === 503,
      'Redis down in /ready',
    );
    await cluster.redis.start();
    const afterRedis = acknowledged.length;
    await waitFor(() => acknowledged.length > afterRedis, 'writes after Redis returned');

    await pg.stop();
    await waitFor(
      async () => (await httpsCall(servers[1]!.port, ca, '/ready')).status === 503,
      'PostgreSQL down in /ready',
    );
    await pg.start();
    const afterPg = acknowledged.length;
    await waitFor(() => acknowledged.length > afterPg, 'writes after PostgreSQL returned');
    loading = false;
    await load;

    // Refused requests during the outages were 503 (retry later), never another 5xx.
    expect(statuses.filter((s) => s >= 500 && s !== 503)).toEqual([]);
    for (const server of servers) {
      await waitFor(async () => (await httpsCall(server.port, ca, '/ready')).status === 200, 'readiness');
    }
    // The same processes: nothing was restarted.
    expect(servers.map((s) => s.child.exitCode)).toEqual([null, null, null]);
    expect(servers.map((s) => s.child.pid)).toEqual(pids);

    const inDb = execFileSync(
      'psql',
      [
        '-At',
        '-h',
        '127.0.0.1',
        '-p',
        String(pg.port),
        '-U',
        'postgres',
        '-d',
        'postgres',
        '-c',
        `select count(*) from certificates where id in (${acknowledged.map((id) => `'${id}'`).join(',')})`,
      ],
      { encoding: 'utf8' },
    ).trim();
    expect(Number(inDb)).toBe(acknowledged.length);
    for (const id of acknowledged) {
      await waitFor(
        async () => (await call('GET', `/api/v1/certificates/${id}`)).json?.status === 'Active',
        `certificate ${id} to be issued`,
      );
    }
  });
});
