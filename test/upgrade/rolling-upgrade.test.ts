import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, type HttpsReply, httpsCall } from '../../packages/server/test/support/https.js';
import { makeTestPki } from '../../packages/server/test/support/openssl-pki.js';
import {
  type PrivateRedis,
  redisServerSkipReason,
  startPrivateRedis,
} from '../../packages/server/test/support/private-services.js';
import { getBinary, ocspStatusAt } from '../../packages/server/test/support/scale.js';
import { queryRows } from '../../packages/server/test/support/sql-query.js';
import { createTempDatabase, postgresSkipReason } from '../../packages/storage-pg/test/helpers.js';
import { ensureRelease, RELEASE_COMMIT, RELEASE_VERSION, releaseSkipReason } from './release.js';

/**
 * A rolling upgrade from release 2.0.0 (N-1) to this tree (N) on one PostgreSQL database, as
 * docs/operations/upgrades.md describes it: two 2.0.0 instances behind a round-robin balancer
 * under mixed load; then, instance by instance, an instance of N starts (the first one applies
 * N's migrations while the 2.0.0 instances keep serving), joins the balancer, and a 2.0.0 instance
 * is drained (out of rotation, its open connections finished, SIGTERM) and stopped.
 */
// Opt-in: about two and a half minutes on the 2-core machine, which `.ci/run` (near its budget)
// does not pay on every run; the lead decides whether CI sets it (docs/operations/upgrades.md).
const optIn =
  process.env.CERTWRIGHT_TEST_UPGRADE === '1'
    ? undefined
    : 'opt-in: set CERTWRIGHT_TEST_UPGRADE=1 to run the rolling-upgrade test';
const skip = optIn ?? (await postgresSkipReason()) ?? redisServerSkipReason() ?? releaseSkipReason();
if (skip) console.warn(`skipping the rolling-upgrade test: ${skip}`);

const CURRENT_MAIN = fileURLToPath(new URL('../../packages/server/src/main.ts', import.meta.url));
const START_CEILING_MS = 180_000;

/** Polls for up to three minutes: a ceiling for a loaded machine, not a timing assertion. */
async function waitFor(
  condition: () => Promise<boolean> | boolean,
  what: string,
  state?: () => string,
): Promise<void> {
  const until = Date.now() + 180_000;
  while (Date.now() < until) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}${state ? ` (${state()})` : ''}`);
}

interface Instance {
  readonly name: string;
  readonly child: ChildProcess;
  readonly port: number;
  readonly exited: Promise<number | null>;
  output(): string;
}

/** Starts one server process and waits for its "ready" line (both releases log the same one). */
async function startInstance(name: string, args: string[], env: Record<string, string>): Promise<Instance> {
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', SVC_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout?.on('data', (d) => {
    text += d;
  });
  child.stderr?.on('data', (d) => {
    text += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not start within ${START_CEILING_MS} ms:\n${text}`));
    }, START_CEILING_MS);
    child.stdout?.on('data', () => {
      const match = /"url":"https:\/\/127\.0\.0\.1:(\d+)".*"msg":"certwright-server ready"/.exec(text);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${name} exited during start-up:\n${text}`));
    });
  });
  return { name, child, port, exited, output: () => text };
}

/**
 * A round-robin TCP balancer on 127.0.0.1 with a drain: `remove` takes a target out of rotation
 * (new connections go elsewhere) and resolves once the connections it already carries to that
 * target have closed, as a balancer's connection draining does before the instance is stopped.
 */
class DrainingBalancer {
  #server: net.Server | undefined;
  #next = 0;
  #targets: number[] = [];
  readonly #open = new Map<number, Set<net.Socket>>();
  /** Connections handed to each target, for the test to see who served. */
  readonly counts = new Map<number, number>();
  port = 0;

  async start(): Promise<void> {
    this.#server = net.createServer((client) => {
      client.on('error', () => {});
      const target = this.#targets[this.#next++ % Math.max(1, this.#targets.length)];
      if (target === undefined) {
        client.destroy();
        return;
      }
      this.counts.set(target, (this.counts.get(target) ?? 0) + 1);
      const upstream = net.connect(target, '127.0.0.1');
      upstream.on('error', () => client.destroy());
      const open = this.#open.get(target) ?? new Set();
      this.#open.set(target, open);
      open.add(upstream);
      upstream.on('close', () => {
        open.delete(upstream);
        client.destroy();
      });
      client.on('close', () => upstream.destroy());
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.#server.address() as net.AddressInfo).port;
  }

  add(port: number): void {
    this.#targets.push(port);
  }

  async remove(port: number): Promise<void> {
    this.#targets = this.#targets.filter((p) => p !== port);
    await waitFor(() => (this.#open.get(port)?.size ?? 0) === 0, `connections to ${port} to drain`);
  }

  async stop(): Promise<void> {
    for (const open of this.#open.values()) for (const s of open) s.destroy();
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }
}

interface Outcome {
  kind: 'create' | 'read' | 'ocsp';
  start: number;
  end: number;
  /** HTTP status, or the transport error's message. */
  result: number | string;
  ok: boolean;
  /** The answer's x-request-id, which names the request in the answering instance's log. */
  requestId?: string;
}

describe.skipIf(skip !== undefined)(`rolling upgrade from ${RELEASE_VERSION} to this tree`, () => {
  let database: Awaited<ReturnType<typeof createTempDatabase>>;
  let redis: PrivateRedis;
  const balancer = new DrainingBalancer();
  const instances: Instance[] = [];
  let env: Record<string, string>;
  let ca: Buffer;
  let releaseMain: string;

  beforeAll(async () => {
    const release = ensureRelease();
    releaseMain = release.main;
    if (release.builtMs > 0) {
      console.info(
        `rolling-upgrade: built release ${RELEASE_VERSION} in ${(release.builtMs / 1000).toFixed(1)} s`,
      );
    }
    database = await createTempDatabase();
    redis = await startPrivateRedis();
    await balancer.start();
    const pki = makeTestPki(['server']);
    ca = readFileSync(pki.ca);
    env = {
      SVC_LISTEN_ADDR: '127.0.0.1',
      SVC_PORT: '0',
      SVC_TLS_CERT_PATH: pki.issued.server!.cert,
      SVC_TLS_KEY_PATH: pki.issued.server!.key,
      SVC_AUTH_SECRET: `upgrade-${randomBytes(12).toString('hex')}`,
      SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      SVC_DATABASE_URL: database.url,
      SVC_REDIS_URL: redis.url,
      SVC_BASE_URL: `https://localhost:${balancer.port}`,
      // The OCSP load is one client: no per-client budget on the PKI routes.
      SVC_RATE_LIMIT_PKI: '0',
    };
  });

  afterAll(async () => {
    for (const instance of instances) instance.child.kill('SIGTERM');
    await Promise.all(instances.map((i) => i.exited));
    await balancer.stop();
    await redis?.stop();
    await database?.drop();
  });

  const startOld = async (name: string) => {
    const instance = await startInstance(name, [releaseMain], env);
    instances.push(instance);
    return instance;
  };
  const startNew = async (name: string) => {
    const instance = await startInstance(name, ['--conditions=source', '--import', 'tsx', CURRENT_MAIN], env);
    instances.push(instance);
    return instance;
  };
  const call = (method: string, path: string, body?: unknown, port = balancer.port): Promise<HttpsReply> =>
    httpsCall(port, ca, path, { method, body, headers: bearer(env.SVC_AUTH_SECRET!) });

  it('loses no acknowledged certificate and fails no request outside the drains', async () => {
    // N-1 creates the database, as it did before the upgrade.
    const old1 = await startOld('2.0.0 #1');
    const old2 = await startOld('2.0.0 #2');
    // Which release answers: the version is 2.0.0 on both sides until the next release is cut, so
    // the commit tells them apart.
    const commitAt = async (i: Instance) =>
      (await call('GET', '/api/v1/version', undefined, i.port)).json.commit;
    expect(await commitAt(old1)).toBe(RELEASE_COMMIT);
    balancer.add(old1.port);
    balancer.add(old2.port);

    const [owner, team, issuer] = await Promise.all([
      call('POST', '/api/v1/owners', { name: 'Upgrade Owner', email: 'owner@example.com' }),
      call('POST', '/api/v1/teams', { name: 'Upgrade Team' }),
      call('POST', '/api/v1/issuers', { name: 'Upgrade CA', type: 'Local' }),
    ]);
    expect([owner.status, team.status, issuer.status]).toEqual([201, 201, 201]);
    const issuerId = issuer.json.id as string;

    // Mixed load: creations, reads of what was acknowledged, OCSP for what was issued.
    const acknowledged: string[] = [];
    const serials = new Map<string, string>();
    const outcomes: Outcome[] = [];
    let running = true;
    let n = 0;
    const timed = async (
      kind: Outcome['kind'],
      run: () => Promise<number | HttpsReply>,
      expected: (s: number) => boolean,
    ) => {
      const start = Date.now();
      try {
        const answer = await run();
        const status = typeof answer === 'number' ? answer : answer.status;
        const id = typeof answer === 'number' ? undefined : answer.headers['x-request-id'];
        outcomes.push({
          kind,
          start,
          end: Date.now(),
          result: status,
          ok: expected(status),
          ...(typeof id === 'string' ? { requestId: id } : {}),
        });
      } catch (error) {
        outcomes.push({ kind, start, end: Date.now(), result: (error as Error).message, ok: false });
      }
    };
    const step = async () => {
      const i = n++;
      const pick = i % 5;
      if (pick === 0 || acknowledged.length === 0) {
        await timed(
          'create',
          async () => {
            const reply = await call('POST', '/api/v1/certificates', {
              name: `roll-${i}`,
              common_name: `roll-${i}.example.com`,
              sans: [`roll-${i}.example.com`],
              renewal_policy_id: 'rp-default',
              issuer_id: issuerId,
              owner_id: owner.json.id,
              team_id: team.json.id,
              profile_id: 'prof-default',
            });
            if (reply.status === 201) acknowledged.push(reply.json.id as string);
            return reply;
          },
          (s) => s === 201,
        );
      } else if (pick < 4 || serials.size === 0) {
        // The oldest acknowledged certificate whose serial is not known yet, else any.
        const id = acknowledged.find((a) => !serials.has(a)) ?? acknowledged[i % acknowledged.length]!;
        await timed(
          'read',
          async () => {
            const reply = await call('GET', `/api/v1/certificates/${id}`);
            if (reply.status === 200 && reply.json.status === 'Active' && !serials.has(id)) {
              const key = await call('GET', `/api/v1/certificates/${id}/key-data`);
              if (key.status !== 200) return key;
              serials.set(id, key.json.serial_number as string);
            }
            return reply;
          },
          (s) => s === 200,
        );
      } else {
        const known = [...serials.values()];
        const serial = known[i % known.length]!;
        await timed(
          'ocsp',
          async () => {
            const reply = await getBinary(
              balancer.port,
              ca,
              `/.well-known/pki/ocsp/${issuerId}/serial/${serial}`,
              {
                accept: 'application/ocsp-response',
              },
            );
            return reply.body.length > 0 ? reply.status : -1;
          },
          (s) => s === 200,
        );
      }
    };
    // Three clients, each with a short pause between requests, one request in five a creation:
    // a steady load the issuance worker keeps up with, not a flood that only measures its backlog.
    const clients = Array.from({ length: 3 }, async () => {
      while (running) {
        await step();
        await new Promise((r) => setTimeout(r, 50));
      }
    });
    const state = () => {
      const tally = new Map<string, number>();
      for (const o of outcomes)
        tally.set(`${o.kind}:${o.result}`, (tally.get(`${o.kind}:${o.result}`) ?? 0) + 1);
      return `${[...tally].map(([k, v]) => `${k}=${v}`).join(' ')}; ${acknowledged.length} acknowledged, ${serials.size} issued`;
    };
    const served = (instance: Instance) => balancer.counts.get(instance.port) ?? 0;
    /** Waits until `instance` has taken `more` further connections of the load. */
    const serves = async (instance: Instance, more: number, what: string) => {
      const from = served(instance);
      await waitFor(() => served(instance) >= from + more, `${instance.name} to serve ${what}`, state);
    };

    const drains: { start: number; end: number }[] = [];
    const replace = async (old: Instance, name: string) => {
      const next = await startNew(name);
      balancer.add(next.port);
      const start = Date.now();
      await balancer.remove(old.port);
      old.child.kill('SIGTERM');
      expect(await old.exited).toBe(0);
      drains.push({ start, end: Date.now() });
      return next;
    };

    // N-1 alone, until something it acknowledged has been issued.
    await waitFor(() => serials.size > 0, 'a certificate issued by 2.0.0', state);
    // The first instance of N applies N's migrations while both 2.0.0 instances serve.
    const new1 = await replace(old1, 'N #1');
    expect(await commitAt(new1)).not.toBe(RELEASE_COMMIT);
    // Mixed: 2.0.0 keeps serving on the database N migrated.
    await serves(old2, 30, 'the mixed phase');
    await serves(new1, 30, 'the mixed phase');
    const new2 = await replace(old2, 'N #2');
    await serves(new2, 30, 'after the upgrade');
    running = false;
    await Promise.all(clients);

    // No request failed outside a drain window, but for one known, bounded class: a 2.0.0
    // instance's named `select *` prepared before N's migrations added a column to its table
    // fails once ("cached plan must not change result type"); inside a transaction 2.0.0 cannot
    // send it again, so that request is a 500 and its transaction rolled back (nothing
    // acknowledged). The next use of the text prepares it afresh (docs/operations/upgrades.md).
    // Each such failure must be named so in the 2.0.0 instance's log; any other failure, and
    // any failure at an instance of N, fails the test.
    const inDrain = (o: Outcome) => drains.some((d) => o.end >= d.start && o.start <= d.end);
    const failures = outcomes.filter((o) => !o.ok);
    const stalePlan = (o: Outcome) =>
      o.requestId !== undefined &&
      [old1, old2].some((i) =>
        i
          .output()
          .split('\n')
          .some(
            (l) =>
              l.includes(`"request_id":"${o.requestId}"`) &&
              l.includes('cached plan must not change result type'),
          ),
      );
    const unexplained = failures.filter((o) => !inDrain(o) && !stalePlan(o));
    console.info(
      `rolling-upgrade: ${outcomes.length} requests (${acknowledged.length} creations acknowledged), ` +
        `${failures.length} failed (${failures.filter(inDrain).length} inside a drain, ` +
        `${failures.filter(stalePlan).length} stale-plan at 2.0.0, ${unexplained.length} other); ` +
        `connections ${[old1, old2, new1, new2].map((i) => `${i.name}=${served(i)}`).join(' ')}`,
    );
    if (unexplained.length > 0) {
      // What the instances logged about them (the answers themselves carry no detail).
      for (const i of [old1, old2, new1, new2]) {
        const errors = i
          .output()
          .split('\n')
          .filter((l) => /"level":(50|"error")/.test(l));
        if (errors.length > 0) console.warn(`${i.name} logged:\n${errors.slice(0, 5).join('\n')}`);
      }
    }
    expect(unexplained).toEqual([]);
    expect(outcomes.filter((o) => o.kind === 'ocsp' && o.ok).length).toBeGreaterThan(0);

    // Everything acknowledged exists and is issued, once.
    for (const id of acknowledged) {
      await waitFor(
        async () => (await call('GET', `/api/v1/certificates/${id}`)).json?.status === 'Active',
        `certificate ${id} to become Active`,
      );
    }
    const rows = await queryRows<{ certificate_id: string; n: number }>(
      database.url,
      'select certificate_id, count(*)::int as n from certificate_versions where certificate_id = any($1) group by certificate_id',
      [acknowledged],
    );
    expect(rows).toHaveLength(acknowledged.length);
    const twice = rows.filter((r) => r.n !== 1).map((r) => r.certificate_id);
    if (twice.length > 0) {
      const detail = await queryRows(
        database.url,
        `select v.certificate_id, v.serial_number, v.issued_at, j.id as job, j.type, j.status, j.attempts, j.locked_by, j.started_at, j.completed_at, j.last_error
           from certificate_versions v left join jobs j on j.certificate_id = v.certificate_id
          where v.certificate_id = any($1) order by v.certificate_id, v.issued_at`,
        [twice],
      );
      console.warn(`issued more than once:\n${detail.map((d) => JSON.stringify(d)).join('\n')}`);
    }
    expect(twice).toEqual([]);
    // N's migrations ran, on the database 2.0.0 created.
    const [schema] = await queryRows<{ v: number }>(
      database.url,
      'select max(version)::int as v from cw_schema_migrations',
    );
    expect(schema!.v).toBeGreaterThan(27);
    // Serials issued by 2.0.0 and by N answer "good" at N.
    const known = [...serials.values()];
    for (const serial of [known[0]!, known[known.length - 1]!]) {
      expect(await ocspStatusAt(new2.port, ca, issuerId, serial)).toBe('good');
    }
    // The audit events both releases chained verify under one chain key.
    const verify = await call('GET', '/api/v1/audit/verify');
    expect(verify.status).toBe(200);
    expect(verify.json.ok).toBe(true);
  });
});
