/**
 * SCEP's transport alone (not a test; no thresholds): certwright's SCEP bench server
 * (bench/support/scep-server.ts) answering GetCACaps and GetCACert, each on a new connection as
 * micromdm scepclient sends them, with its listener composed both ways and the two started
 * alternately: `direct` (the server's own composition, direct connections first) and
 * `node-http` (node:http reads every request, BENCH_SCEP_LISTENER=node-http). Server CPU per
 * request is the process's user + system time (/proc/<pid>/stat) over the measured requests.
 *
 *   node --conditions=source --import tsx bench/scep-requests.ts [requests=2000] [rounds=2] [engine=pglite]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { processCpuMs } from './support/proc-cpu.js';

const requests = Number(process.argv[2] ?? '2000');
const rounds = Number(process.argv[3] ?? '2');
const engine = process.argv[4] ?? 'pglite';
/** Requests before the window opens, so that the JIT has settled. */
const WARMUP = 500;
const CONCURRENCY = 2;

function start(listener: 'direct' | 'node-http'): Promise<{ child: ChildProcess; port: number }> {
  const script = fileURLToPath(new URL('./support/scep-server.ts', import.meta.url));
  const child = spawn(
    process.execPath,
    ['--conditions=source', '--import', 'tsx', script, engine, 'bench-challenge'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, BENCH_SCEP_LISTENER: listener },
    },
  );
  return new Promise((resolve, reject) => {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const nl = buffer.indexOf('\n');
      if (nl >= 0) resolve({ child, port: (JSON.parse(buffer.slice(0, nl)) as { port: number }).port });
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
}

/** One GET on a connection of its own (no agent: the connection closes after the answer). */
function get(port: number, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`${path}: HTTP ${res.statusCode}`));
      res.resume();
      res.on('end', () => resolve());
    });
    req.on('error', reject);
    req.end();
  });
}

async function run(port: number, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const i = next++;
        await get(port, `/scep?operation=${i % 2 === 0 ? 'GetCACaps' : 'GetCACert'}`);
      }
    }),
  );
}

console.log(
  `| listener (${requests} GetCACaps/GetCACert, each on a new connection, ${CONCURRENCY} at a time, ${engine}) | server CPU per request | load |\n|---|---|---|`,
);
for (let round = 0; round < rounds; round++) {
  for (const listener of ['node-http', 'direct'] as const) {
    const { child, port } = await start(listener);
    try {
      await run(port, WARMUP);
      const load0 = loadavg()[0]!.toFixed(1);
      const cpu0 = processCpuMs(child.pid!);
      await run(port, requests);
      const perRequestUs = ((processCpuMs(child.pid!) - cpu0) * 1000) / requests;
      const load1 = loadavg()[0]!.toFixed(1);
      console.log(`| ${listener} | ${perRequestUs.toFixed(0)} µs | ${load0} → ${load1} |`);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }
}
