/**
 * Node bridge benchmark (not a test; no thresholds): what `toWebRequest` / `sendWebResponse`
 * (packages/core/src/node, used by the server's listener and every host adapter) cost per
 * request over answering with node:http alone. Each server runs in its own process and its
 * CPU (user + system) comes from /proc/<pid>/stat across the timed requests; the client is
 * this process, over one keep-alive agent.
 *
 *   pnpm bench bridge
 *   BENCH_BRIDGE_REQUESTS=6000 BENCH_BRIDGE_CONCURRENCY=8 BENCH_BRIDGE_ROUNDS=3 pnpm bench bridge
 *   BENCH_BRIDGE_BEFORE=/tmp/old-bridge.ts pnpm bench bridge   # also an older bridge, alternated
 *
 * Each request is a POST with a 600-byte JSON body (an ACME JWS is about that size) answered
 * with a small JSON body; the server reads the whole body. Rounds alternate raw and bridge so
 * that the machine's load changes fall on both.
 */
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { processCpuMs } from './support/proc-cpu.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const REQUESTS = env('BENCH_BRIDGE_REQUESTS', 6000);
const CONCURRENCY = env('BENCH_BRIDGE_CONCURRENCY', 8);
const ROUNDS = env('BENCH_BRIDGE_ROUNDS', 3);
const WARMUP = 1000;
const BODY = Buffer.from(
  JSON.stringify({ protected: 'x'.repeat(200), payload: 'y'.repeat(250), signature: 'z'.repeat(86) }),
);

const BEFORE = process.env.BENCH_BRIDGE_BEFORE;

async function startServer(mode: string) {
  const before = mode === 'before';
  const child = spawn(
    process.execPath,
    [
      '--conditions=source',
      '--import',
      'tsx',
      fileURLToPath(new URL('./support/bridge-server.ts', import.meta.url)),
      before ? 'bridge' : mode,
    ],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: before && BEFORE ? { ...process.env, BENCH_BRIDGE_MODULE: BEFORE } : process.env,
    },
  );
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise<string>((resolve) => lines.once('line', resolve));
  const { port } = JSON.parse(first) as { port: number };
  return { child, port, stop: () => child.stdin.end() };
}

function post(agent: Agent, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/acme/order/1/finalize',
        agent,
        headers: {
          'content-type': 'application/jose+json',
          'content-length': BODY.length,
          'user-agent': 'bench',
        },
      },
      (res) => {
        res.on('data', () => {});
        res.on('end', () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(BODY);
  });
}

async function drive(agent: Agent, port: number, count: number) {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < count) await post(agent, port);
    }),
  );
}

async function measure(mode: string): Promise<number> {
  const server = await startServer(mode);
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  try {
    await drive(agent, server.port, WARMUP);
    const before = processCpuMs(server.child.pid as number);
    await drive(agent, server.port, REQUESTS);
    return (processCpuMs(server.child.pid as number) - before) / REQUESTS;
  } finally {
    agent.destroy();
    server.stop();
  }
}

const modes = BEFORE ? ['raw', 'before', 'bridge'] : ['raw', 'bridge'];
const figures: Record<string, number[]> = { raw: [], before: [], bridge: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const mode of modes) figures[mode]?.push(await measure(mode));
}
const fmt = (values: number[]) => values.map((v) => v.toFixed(3)).join(' / ');
console.log(`${REQUESTS} POSTs (${BODY.length}-byte body), ${CONCURRENCY} in flight, ${ROUNDS} rounds`);
console.log('| server | CPU ms / request (each round) |');
console.log('|---|---|');
console.log(`| node:http alone | ${fmt(figures.raw ?? [])} |`);
if (BEFORE) console.log(`| Node bridge, before (${BEFORE}) | ${fmt(figures.before ?? [])} |`);
console.log(`| Node bridge | ${fmt(figures.bridge ?? [])} |`);
const raw = figures.raw ?? [];
const bridge = figures.bridge ?? [];
const over = bridge.map((b, i) => b - (raw[i] ?? 0));
console.log(`bridge over node:http alone: ${fmt(over)} ms per request`);
