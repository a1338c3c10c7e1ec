/**
 * Where a kept-alive TLS 1.3 answer's server CPU goes (not a test; no thresholds): the same fixed
 * 480-byte answer served by listeners that add the direct path's pieces one at a time, each in its
 * own process (one, no cluster) driven by wrk, rounds interleaved so a loaded machine weighs on
 * every variant alike. Prints the server CPU per answer (µs, user + system from /proc, every
 * thread) per variant, median over the rounds, and the load average:
 *   - tls-raw: `tls.createServer`, an answer written for each request read (wrk sends one
 *     request per record and waits for its answer), no HTTP parsing: the floor of Node + TLS;
 *   - https-raw: the same on `https.createServer` (its 'secureConnection' listener taken aside):
 *     what node:https's server adds when its HTTP side never sees the socket;
 *   - direct-fixed: `https.createServer` with attachDirectConnections (direct-connections.ts)
 *     and a direct entry answering the fixed bytes: our head reader, timers and write;
 *   - node-fixed: node:https itself answering the fixed bytes (`request` listener).
 * The whole server on the same load is bench/ocsp.ts (BENCH_OCSP_CASES=cli).
 * Run: node --conditions=source --import tsx bench/ocsp-bisect.ts [seconds=4] [rounds=3]
 * (BENCH_BISECT_VARIANTS=a,b to choose, BENCH_OCSP_CONNECTIONS, default 64).
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';
import type { DirectPath } from '../packages/core/src/index.js';
import { attachDirectConnections } from '../packages/server/src/direct-connections.js';
import { processCpuMs } from './support/proc-cpu.js';
import { loopbackTlsIdentity } from './support/tls-listener.js';
import { runWrk } from './support/wrk.js';

const VARIANTS = [
  'tls-raw',
  'tls-raw-microtask',
  'tls-raw-timeout',
  'https-raw',
  'direct-fixed',
  'node-fixed',
] as const;
type Variant = (typeof VARIANTS)[number];

const BODY = randomBytes(480);
/** The head node:http would write for it (kept fixed: the Date of one second is fine for a bench). */
const FIXED = Buffer.concat([
  Buffer.from(
    'HTTP/1.1 200 OK\r\ncontent-type: application/ocsp-response\r\ncontent-length: 480\r\n' +
      `Date: ${new Date().toUTCString()}\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n`,
    'latin1',
  ),
  BODY,
]);

async function serve(variant: Variant, port: number): Promise<void> {
  const { certPem, keyPem } = await loopbackTlsIdentity();
  // As tls-server.ts: TLS 1.3 only, client certificates asked for, not required.
  const options = {
    cert: certPem,
    key: keyPem,
    minVersion: 'TLSv1.3' as const,
    requestCert: true,
    rejectUnauthorized: false,
  };
  // One answer per 'data': wrk writes a request in one record and waits for its answer.
  const raw = (socket: TLSSocket) => {
    socket.setNoDelay(true);
    socket.on('data', () => socket.write(FIXED));
    socket.on('error', () => socket.destroy());
  };
  let listening: { listen(port: number, host: string, cb: () => void): unknown };
  if (variant === 'tls-raw') {
    listening = createTlsServer(options, raw);
  } else if (variant === 'tls-raw-microtask') {
    listening = createTlsServer(options, (socket: TLSSocket) => {
      socket.setNoDelay(true);
      socket.on('data', () => queueMicrotask(() => socket.write(FIXED)));
      socket.on('error', () => socket.destroy());
    });
  } else if (variant === 'tls-raw-timeout') {
    // An idle timeout on the socket, as direct-connections.ts keeps: node refreshes it on every read and write.
    listening = createTlsServer(options, (socket: TLSSocket) => {
      raw(socket);
      socket.setTimeout(5000, () => socket.destroy());
    });
  } else if (variant === 'https-raw') {
    const server = createHttpsServer(options);
    server.removeAllListeners('secureConnection');
    server.on('secureConnection', raw);
    listening = server;
  } else if (variant === 'direct-fixed') {
    const server = createHttpsServer(options, (_req, res) => {
      res.statusCode = 404;
      res.end();
    });
    const direct: DirectPath = {
      bodyLimit: () => 4096,
      answer: async () => ({
        status: 200,
        headers: { 'content-type': 'application/ocsp-response' },
        body: BODY,
      }),
    };
    attachDirectConnections({ server, event: 'secureConnection', direct });
    listening = server;
  } else {
    listening = createHttpsServer(options, (req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/ocsp-response', 'content-length': '480' });
        res.end(BODY);
      });
    });
  }
  // Handshakes are counted: a listener that closes kept-alive connections pays them per answer.
  let handshakes = 0;
  (listening as import('node:tls').Server).on('secureConnection', () => handshakes++);
  listening.listen(port, '127.0.0.1', () => console.log('ready'));
  process.on('SIGUSR2', () => console.log(`handshakes ${handshakes}`));
  // A clean exit, so that `--cpu-prof` (BENCH_BISECT_EXEC_ARGV) writes its profile.
  process.on('SIGTERM', () => process.exit(0));
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createNetServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

async function measure(variant: Variant, seconds: number, connections: number) {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_BISECT_EXEC_ARGV?.split(' ') ?? []),
      '--conditions=source',
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      '--serve',
      variant,
      String(port),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      if (c.toString().includes('ready')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`${variant} exited ${code}`)));
  });
  try {
    const load = {
      url: `https://127.0.0.1:${port}/`,
      body: Uint8Array.from([0x30, 0]),
      nonceTail: false,
      connections,
      threads: 2,
    };
    await runWrk({ ...load, seconds: 1 });
    let cpu0 = 0;
    const r = await runWrk({ ...load, seconds }, () => {
      cpu0 = processCpuMs(child.pid!);
    });
    const cpu = processCpuMs(child.pid!) - cpu0;
    const counted = new Promise<number>((resolve) =>
      child.stdout.on('data', (c: Buffer) => {
        const n = /handshakes (\d+)/.exec(c.toString());
        if (n) resolve(Number(n[1]));
      }),
    );
    child.kill('SIGUSR2');
    const handshakes = await counted;
    if (r.failed > 0) throw new Error(`${variant}: ${r.failed} failed answers`);
    return {
      handshakes,
      us: (cpu * 1000) / r.requests,
      perSecond: r.requests / r.seconds,
      wrkUs: (r.cpuMs * 1000) / r.requests,
    };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

if (process.argv[2] === '--serve') {
  await serve(process.argv[3] as Variant, Number(process.argv[4]));
} else {
  const seconds = Number(process.argv[2] ?? 4);
  const rounds = Number(process.argv[3] ?? 3);
  const connections = Number(process.env.BENCH_OCSP_CONNECTIONS ?? 64);
  const chosen = (process.env.BENCH_BISECT_VARIANTS?.split(',') ?? VARIANTS) as Variant[];
  const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
  console.log(
    `ocsp-bisect: node ${process.version}, ${seconds} s × ${rounds} rounds, wrk 2 threads, ${connections} connections`,
  );
  console.log(`uptime before: ${uptime()}`);
  const results = new Map<Variant, { us: number; perSecond: number; wrkUs: number; handshakes: number }[]>();
  for (let round = 0; round < rounds; round++) {
    for (const variant of chosen) {
      const m = await measure(variant, seconds, connections);
      console.log(
        `round ${round + 1} ${variant}: ${m.us.toFixed(1)} µs server CPU per answer, ${Math.round(m.perSecond)} /s, ${m.handshakes} handshakes in all`,
      );
      results.set(variant, [...(results.get(variant) ?? []), m]);
    }
  }
  console.log(`uptime after: ${uptime()}`);
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  console.log('| variant | server µs CPU per answer (median) | answers/s (median) | wrk µs per answer |');
  console.log('| --- | --- | --- | --- |');
  for (const [variant, ms] of results) {
    console.log(
      `| ${variant} | ${median(ms.map((m) => m.us)).toFixed(1)} | ${Math.round(median(ms.map((m) => m.perSecond)))} | ${median(ms.map((m) => m.wrkUs)).toFixed(1)} |`,
    );
  }
}
