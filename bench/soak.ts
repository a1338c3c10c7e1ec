/**
 * Soak benchmark (not a test; no thresholds): three certwright-server processes on one private
 * PostgreSQL and one private Redis behind a round-robin TCP balancer, under mixed load for 30
 * minutes — issuance, renewal, revocation, OCSP, list queries, ACME accounts, ACME orders (the
 * full RFC 8555 flow under a `trust_authenticated` profile) and webhook deliveries (a receiver on
 * 127.0.0.1 subscribed to revocations and renewals). Prints resident memory growth after
 * warm-up, 5xx count, lost writes (acknowledged issuances — REST and ACME — and revocations
 * missing from the database at the end), webhook deliveries received against the events the
 * database holds (none lost, none dead) and throughput per operation.
 *
 *   pnpm bench soak                        30 minutes
 *   BENCH_SCALE=0.05 pnpm bench soak       90 s
 *   BENCH_SOAK_BALANCER=haproxy pnpm bench soak   Debian's HAProxy (mode tcp, TLS passed through)
 *                                          instead of the Node round-robin balancer
 *   pnpm bench soak faults                 plus faults: an instance SIGKILLed, Redis restarted,
 *   (or BENCH_SOAK_FAULTS=1)               PostgreSQL restarted, each mid-load
 *
 * The PostgreSQL and Redis are private instances started here; the machine's shared services
 * are never touched. Figures go to docs/operations/scaling.md.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { Agent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createCertificationRequest, generateKeyPair } from '../packages/core/src/pki/index.js';
import { httpsCall } from '../packages/server/test/support/https.js';
import { startPrivatePostgres } from '../packages/server/test/support/private-services.js';
import {
  AcmeKey,
  acmeNonce,
  acmePost,
  type Cluster,
  startCluster,
  type TcpBalancer,
} from '../packages/server/test/support/scale.js';
import { type AcmeAccountKey, AcmeBenchClient, AcmeBenchError } from './support/acme-client.js';

const scale = Number(process.env.BENCH_SCALE ?? '1');
const faults = process.argv.includes('faults') || process.env.BENCH_SOAK_FAULTS === '1';
const durationMs = Math.max(20_000, Math.round(30 * 60_000 * scale));
const warmupMs = Math.round(durationMs * 0.2);
const CONCURRENCY = Number(process.env.BENCH_SOAK_CONCURRENCY ?? '6');
const BALANCER = process.env.BENCH_SOAK_BALANCER === 'haproxy' ? 'haproxy' : 'node';

type Op = 'issue' | 'renew' | 'revoke' | 'ocsp' | 'list' | 'acme-account' | 'acme-order';
/** Relative weights of the mixed load. */
const WEIGHTS: [Op, number][] = [
  ['issue', 3],
  ['renew', 2],
  ['revoke', 1],
  ['ocsp', 6],
  ['list', 4],
  ['acme-account', 1],
  ['acme-order', 2],
];
const stats = new Map<Op, { ok: number; s4xx: number; s5xx: number; errors: number; ms: number }>();
for (const [op] of WEIGHTS) stats.set(op, { ok: 0, s4xx: 0, s5xx: 0, errors: 0, ms: 0 });

/**
 * The webhook receiver: every delivery it gets, by Idempotency-Key (the notification event's
 * id, the same on every retry), so a delivery received twice counts once, as a receiver
 * deduplicating by that key would.
 */
const received = new Map<string, { type: string; resource_id: string }>();
let duplicateDeliveries = 0;
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const key = String(req.headers['idempotency-key'] ?? '');
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, string>;
    if (received.has(key)) duplicateDeliveries++;
    else received.set(key, { type: body.type ?? '', resource_id: body.resource_id ?? '' });
    res.end('ok');
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverPort = (receiver.address() as AddressInfo).port;

const pg = await startPrivatePostgres();
const log = (msg: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${msg}`);
log(`private PostgreSQL on ${pg.port}; starting three instances behind the ${BALANCER} balancer`);
const cluster: Cluster<TcpBalancer> = await startCluster({
  instances: 3,
  balancer: BALANCER,
  databaseUrl: pg.url,
  // The CLI plus the test-only loopback opt-in for the webhook receiver.
  entry: fileURLToPath(new URL('./support/soak-server.ts', import.meta.url)),
  env: {
    // Pending and failed deliveries are swept this often (default 2 min): a delivery whose queue
    // job was lost (Redis down, instance killed) is retried within the drain at the end.
    SVC_NOTIFICATION_RETRY_INTERVAL: '10s',
    // The balancer's address is the single client of every request: lift the per-client limits.
    SVC_RATE_LIMIT_PUBLIC: '0',
    SVC_RATE_LIMIT_PKI: '0',
    SVC_RATE_LIMIT_ENROLLMENT: '0',
  },
});
const { call, ca } = cluster;

const psql = (query: string): string =>
  execFileSync(
    'psql',
    ['-At', '-h', '127.0.0.1', '-p', String(pg.port), '-U', 'postgres', '-d', 'postgres', '-c', query],
    {
      encoding: 'utf8',
    },
  ).trim();

const setup = await Promise.all([
  call('POST', '/api/v1/owners', { name: 'Soak', email: 'soak@example.com' }),
  call('POST', '/api/v1/teams', { name: 'Soak' }),
  call('POST', '/api/v1/issuers', { name: 'Soak CA', type: 'Local' }),
]);
if (setup.some((r) => r.status !== 201)) throw new Error(`setup failed: ${setup.map((r) => r.status)}`);
const [owner, team, issuer] = setup.map((r) => r.json.id as string) as [string, string, string];

// ACME orders on the default profile, every authorization valid for an authenticated account
// (docs/protocols/acme.md); its per-profile limits off, like the per-client ones above.
const configured = await Promise.all([
  call('PUT', '/api/v1/profiles/prof-default', {
    acme: {
      enabled: true,
      auth_mode: 'trust_authenticated',
      rate_limits: { orders_per_account_per_hour: null, accounts_per_ip_per_hour: null },
    },
  }),
  call('PUT', '/api/system/settings/webhook-security', { allowed_private_ranges: '127.0.0.1' }),
]);
if (configured.some((r) => r.status !== 200))
  throw new Error(`configuration failed: ${configured.map((r) => `${r.status} ${r.body}`).join('; ')}`);
const hook = await call('POST', '/api/notifications/webhooks', {
  name: 'soak receiver',
  url: `http://receiver.test:${receiverPort}/soak`,
  service: 'generic',
  events: ['Revocation', 'RenewalSuccess'],
});
if (hook.status !== 201) throw new Error(`webhook create failed: ${hook.status} ${hook.body}`);
const hookChannel = `webhook:${hook.json.id as string}`;

// One TLS connection per request, as the other operations make: the balancer spreads them.
const acme = new AcmeBenchClient({
  directoryUrl: `${cluster.baseUrl}/acme/directory`,
  agent: new Agent({ keepAlive: false, ca }),
  pollMs: 200,
});
const acmeAccounts: AcmeAccountKey[] = [];
for (let i = 0; i < 3; i++)
  acmeAccounts.push(await acme.newAccount((await generateKeyPair('ECDSA-P256')).privateKey));

/** Acknowledged writes: what the database must hold at the end. */
const issued = new Map<string, string>(); // certificate id → serial
const revoked = new Set<string>();
/** Renewals answered 2xx: each raised one RenewalSuccess event for the webhook. */
let renewed = 0;
/** Serials (lower-case hex) of the certificates ACME orders downloaded. */
const acmeSerials: string[] = [];
const active: string[] = [];
let seq = 0;

function pick(): Op {
  const total = WEIGHTS.reduce((a, [, w]) => a + w, 0);
  let r = Math.random() * total;
  for (const [op, w] of WEIGHTS) {
    r -= w;
    if (r < 0) return op;
  }
  return 'list';
}

async function run(op: Op): Promise<number> {
  switch (op) {
    case 'issue': {
      const n = seq++;
      const created = await call('POST', '/api/v1/certificates', {
        name: `soak-${n}`,
        common_name: `soak-${n}.example.com`,
        sans: [`soak-${n}.example.com`],
        renewal_policy_id: 'rp-default',
        issuer_id: issuer,
        owner_id: owner,
        team_id: team,
        profile_id: 'prof-default',
      });
      if (created.status !== 201) return created.status;
      const done = await call('POST', `/api/v1/certificates/${created.json.id}/issue`, {});
      if (done.status >= 200 && done.status < 300) {
        const key = await call('GET', `/api/v1/certificates/${created.json.id}/key-data`);
        issued.set(created.json.id, key.json?.serial_number ?? '');
        active.push(created.json.id);
      }
      return done.status;
    }
    case 'renew': {
      const id = active[Math.floor(Math.random() * active.length)];
      if (!id) return 200;
      const reply = await call('POST', `/api/v1/certificates/${id}/renew`, {});
      if (reply.status >= 200 && reply.status < 300) renewed++;
      return reply.status;
    }
    case 'revoke': {
      if (active.length < 5) return 200;
      const id = active.splice(Math.floor(Math.random() * active.length), 1)[0]!;
      const reply = await call('POST', `/api/v1/certificates/${id}/revoke`, { reason: 'superseded' });
      if (reply.status === 200) revoked.add(id);
      else active.push(id);
      return reply.status;
    }
    case 'ocsp': {
      const serials = [...issued.values()].filter(Boolean);
      const serial = serials[Math.floor(Math.random() * serials.length)];
      if (!serial) return 200;
      return (await httpsCall(cluster.balancer.port, ca, `/.well-known/pki/ocsp/${issuer}/serial/${serial}`))
        .status;
    }
    case 'list':
      return (await call('GET', '/api/v1/certificates?per_page=50&page=1')).status;
    case 'acme-order': {
      const n = seq++;
      const name = `acme-${n}.soak.example.com`;
      const { privateKey } = await generateKeyPair('ECDSA-P256');
      const csr = createCertificationRequest({
        subject: `CN=${name}`,
        privateKey,
        subjectAltNames: [{ type: 'dns', value: name }],
      });
      try {
        const pem = await acme.issue(acmeAccounts[n % acmeAccounts.length]!, name, csr);
        acmeSerials.push(new X509Certificate(pem).serialNumber.toLowerCase().replace(/^0+/, ''));
        return 200;
      } catch (error) {
        if (error instanceof AcmeBenchError && error.status !== undefined) return error.status;
        throw error;
      }
    }
    case 'acme-account': {
      const key = new AcmeKey();
      const nonce = await acmeNonce(cluster.balancer.port, ca);
      const jws = key.jws(
        { termsOfServiceAgreed: true },
        { url: `${cluster.baseUrl}/acme/new-account`, nonce },
      );
      return (await acmePost(cluster.balancer.port, ca, '/acme/new-account', jws)).status;
    }
  }
}

const rss = () =>
  cluster.servers.map((s) => {
    try {
      const status = readFileSync(`/proc/${s.child.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
    } catch {
      return 0;
    }
  });

const started = performance.now();
const deadline = started + durationMs;
let measuring = false;
let rssAfterWarmup: number[] = [];
const events: string[] = [];
/** What is broken right now (faults form), so 5xx are attributed to the outage they fell in. */
let phase = 'steady';
const fivexxByPhase = new Map<string, number>();

async function worker() {
  while (performance.now() < deadline) {
    const op = pick();
    const s = stats.get(op)!;
    const t = performance.now();
    try {
      const status = await run(op);
      if (measuring) {
        s.ms += performance.now() - t;
        if (status >= 500) {
          s.s5xx++;
          fivexxByPhase.set(phase, (fivexxByPhase.get(phase) ?? 0) + 1);
        } else if (status >= 400) s.s4xx++;
        else s.ok++;
      }
    } catch {
      if (measuring) s.errors++;
    }
  }
}

async function ready(port: number): Promise<string> {
  try {
    const r = await httpsCall(port, ca, '/ready');
    return `${r.status} ${JSON.stringify(r.json?.checks ?? {})}`;
  } catch (error) {
    return `unreachable (${(error as Error).message})`;
  }
}

async function faultPlan() {
  const at = (fraction: number) =>
    new Promise((r) => setTimeout(r, Math.max(0, started + durationMs * fraction - performance.now())));
  const outageMs = Math.min(10_000, Math.max(3_000, durationMs * 0.05));
  const survivor = cluster.servers[0]!;
  await at(0.3);
  const victim = cluster.servers[2]!;
  victim.child.kill('SIGKILL');
  phase = 'one instance killed';
  events.push(`${elapsed()} SIGKILLed the instance on ${victim.port}; the balancer skips it`);
  await at(0.45);
  phase = 'Redis down';
  await cluster.redis.stop();
  await new Promise((r) => setTimeout(r, 1500));
  events.push(`${elapsed()} Redis down: /ready of ${survivor.port} → ${await ready(survivor.port)}`);
  await new Promise((r) => setTimeout(r, outageMs));
  await cluster.redis.start();
  phase = 'after Redis returned';
  events.push(`${elapsed()} Redis back (empty)`);
  await at(0.65);
  phase = 'PostgreSQL down';
  await pg.stop();
  await new Promise((r) => setTimeout(r, 1500));
  events.push(`${elapsed()} PostgreSQL down: /ready of ${survivor.port} → ${await ready(survivor.port)}`);
  await new Promise((r) => setTimeout(r, outageMs));
  await pg.start();
  phase = 'after PostgreSQL returned';
  events.push(`${elapsed()} PostgreSQL back`);
  for (let i = 0; i < 600; i++) {
    if ((await ready(survivor.port)).startsWith('200')) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  events.push(`${elapsed()} /ready of ${survivor.port} → ${await ready(survivor.port)}`);
}
const elapsed = () => `t+${((performance.now() - started) / 1000).toFixed(1)}s`;

log(
  `mixed load for ${(durationMs / 1000).toFixed(0)} s, ${CONCURRENCY} clients, faults ${faults ? 'on' : 'off'}`,
);
/**
 * RSS sampled every 1/60 of the measured part: two single readings swing by tens of percent
 * with the garbage collector's timing, so growth is also given as the mean of the last sixth
 * of the samples against the mean of the first sixth.
 */
const rssSamples: number[][] = [];
let sampler: NodeJS.Timeout | undefined;
setTimeout(() => {
  measuring = true;
  rssAfterWarmup = rss();
  rssSamples.push(rssAfterWarmup);
  sampler = setInterval(() => rssSamples.push(rss()), Math.max(1000, (durationMs - warmupMs) / 60));
  log(`warm-up over; RSS ${rssAfterWarmup.map((b) => (b / 2 ** 20).toFixed(0)).join(' / ')} MiB`);
}, warmupMs);
await Promise.all([...Array.from({ length: CONCURRENCY }, () => worker()), ...(faults ? [faultPlan()] : [])]);
clearInterval(sampler);
const rssEnd = rss();
rssSamples.push(rssEnd);
const measuredMs = durationMs - warmupMs;

// Lost writes: every acknowledged issuance has its certificate and a version, every
// acknowledged revocation its Revoked status.
const ids = [...issued.keys()];
const quote = (xs: string[]) => xs.map((x) => `'${x.replace(/'/g, "''")}'`).join(',');
const foundIssued =
  ids.length === 0
    ? 0
    : Number(
        psql(
          `select count(distinct c.id) from certificates c join certificate_versions v on v.certificate_id = c.id where c.id in (${quote(ids)})`,
        ),
      );
const foundAcme =
  acmeSerials.length === 0
    ? 0
    : Number(
        psql(
          `select count(distinct ltrim(lower(serial_number), '0')) from certificate_versions where ltrim(lower(serial_number), '0') in (${quote(acmeSerials)})`,
        ),
      );
const foundRevoked =
  revoked.size === 0
    ? 0
    : Number(
        psql(`select count(*) from certificates where status = 'Revoked' and id in (${quote([...revoked])})`),
      );

// Webhook deliveries: once the load stops, wait for every event on the receiver's channel to be
// settled (sent or dead), then compare what the receiver got with what the database holds.
const webhookEvents = () =>
  psql(
    `select id, type, coalesce(certificate_id, ''), status from notification_events where channel = '${hookChannel}'`,
  )
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [id, type, certificateId, status] = line.split('|') as [string, string, string, string];
      return { id, type, certificateId, status };
    });
const drainStarted = performance.now();
const drainLimitMs = 180_000;
let hookEvents = webhookEvents();
while (
  hookEvents.some((e) => e.status === 'pending' || e.status === 'failed') &&
  performance.now() - drainStarted < drainLimitMs
) {
  await new Promise((r) => setTimeout(r, 1000));
  hookEvents = webhookEvents();
}
const drainMs = performance.now() - drainStarted;
const byStatus = new Map<string, number>();
for (const e of hookEvents) byStatus.set(e.status, (byStatus.get(e.status) ?? 0) + 1);
const revocationEvents = new Set(
  hookEvents.filter((e) => e.type === 'Revocation').map((e) => e.certificateId),
);
const renewalEvents = hookEvents.filter((e) => e.type === 'RenewalSuccess').length;
/** Acknowledged revocations whose event never reached the receiver's channel in the database. */
const revocationsWithoutEvent = [...revoked].filter((id) => !revocationEvents.has(id)).length;
/** Events the database says were sent that the receiver never got. */
const sentNotReceived = hookEvents.filter((e) => e.status === 'sent' && !received.has(e.id)).length;
const receivedUnknown = [...received.keys()].filter((k) => !hookEvents.some((e) => e.id === k)).length;

console.log(
  `\nsoak: 3 instances behind ${cluster.balancer.name}, PostgreSQL + Redis, ${CONCURRENCY} clients, ${(durationMs / 1000).toFixed(0)} s (${(measuredMs / 1000).toFixed(0)} s measured after warm-up)${faults ? ', with faults' : ''}`,
);
console.log('operation       ok    4xx   5xx   errors   per s   mean ms');
let total5xx = 0;
for (const [op, s] of stats) {
  total5xx += s.s5xx;
  const n = s.ok + s.s4xx + s.s5xx + s.errors;
  console.log(
    `${op.padEnd(12)} ${String(s.ok).padStart(6)} ${String(s.s4xx).padStart(6)} ${String(s.s5xx).padStart(5)} ${String(s.errors).padStart(8)} ${((n / measuredMs) * 1000).toFixed(1).padStart(7)} ${(n ? s.ms / n : 0).toFixed(1).padStart(9)}`,
  );
}
console.log(
  `5xx total: ${total5xx}${total5xx ? ` (${[...fivexxByPhase].map(([p, n]) => `${p}: ${n}`).join(', ')})` : ''}`,
);
console.log(
  `resident memory after warm-up → end: ${cluster.servers
    .map((_, i) => {
      const a = rssAfterWarmup[i] ?? 0;
      const b = rssEnd[i] ?? 0;
      return a && b
        ? `${(a / 2 ** 20).toFixed(0)} → ${(b / 2 ** 20).toFixed(0)} MiB (${(((b - a) / a) * 100).toFixed(1)} %)`
        : 'gone';
    })
    .join('; ')}`,
);
const sixth = Math.max(1, Math.floor(rssSamples.length / 6));
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(
  `resident memory, mean of the first → last sixth of ${rssSamples.length} samples: ${cluster.servers
    .map((_, i) => {
      const series = rssSamples.map((sample) => sample[i] ?? 0);
      if (series.some((b) => b === 0)) return 'gone';
      const a = mean(series.slice(0, sixth));
      const b = mean(series.slice(-sixth));
      const [lo, hi] = [Math.min(...series), Math.max(...series)].map((x) => (x / 2 ** 20).toFixed(0));
      return `${(a / 2 ** 20).toFixed(0)} → ${(b / 2 ** 20).toFixed(0)} MiB (${(((b - a) / a) * 100).toFixed(1)} %, range ${lo}–${hi})`;
    })
    .join('; ')}`,
);
console.log(
  `lost writes: issuances ${ids.length - foundIssued} of ${ids.length} acknowledged, revocations ${revoked.size - foundRevoked} of ${revoked.size} acknowledged`,
);
console.log(
  `lost writes (ACME): certificates ${acmeSerials.length - foundAcme} of ${acmeSerials.length} downloaded`,
);
console.log(
  `webhook: ${hookEvents.length} events on its channel (at least ${revoked.size} revocations + ${renewed} renewals acknowledged = ${revoked.size + renewed}: a request whose answer was lost may have committed; ` +
    `${revocationEvents.size} Revocation, ${renewalEvents} RenewalSuccess), ` +
    `statuses ${[...byStatus].map(([st, n]) => `${st} ${n}`).join(', ') || 'none'} after a ${(drainMs / 1000).toFixed(0)} s drain; ` +
    `received ${received.size} (${duplicateDeliveries} duplicate deliveries); ` +
    `lost: ${revocationsWithoutEvent} acknowledged revocations without an event, ${sentNotReceived} sent but not received, ${receivedUnknown} received but unknown`,
);
if (revoked.size > foundRevoked) {
  // Which acknowledged revocations no longer read Revoked, and what they read instead.
  const rows = psql(
    `select id, status from certificates where status <> 'Revoked' and id in (${quote([...revoked])})`,
  );
  console.log(`revocations not in the database as Revoked (id|status now):\n${rows}`);
}
for (const event of events) console.log(`fault: ${event}`);

await cluster.stop();
await pg.destroy();
receiver.close();
