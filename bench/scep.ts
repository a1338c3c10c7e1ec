/**
 * SCEP benchmark (not a test; no thresholds): micromdm scepserver (Debian `scep`) and certwright
 * side by side, driven by the same client — micromdm scepclient, one PKCSReq per run — with the
 * same pre-generated RSA-2048 keys, a static challenge, plain HTTP on 127.0.0.1 (scepserver
 * speaks no TLS), `CONCURRENCY` clients at a time.
 *
 *   pnpm bench scep            (or node --conditions=source --import tsx bench/scep.ts [n=100] [engine=pglite])
 *
 * Server CPU per enrollment is the server process's user+system time (/proc/<pid>/stat) over
 * the measured enrollments; the clients run in their own processes and are not counted. On
 * PostgreSQL the database backends' CPU is read the same way (as the ACME benchmark does) and
 * added: scepserver's file depot works inside its own process.
 * scepserver binds every interface, so it runs in a network namespace of its own (loopback
 * only), reached through socat over a UNIX socket; socat's time is not counted. Its CA is
 * RSA-2048 (`scepserver ca -init -keySize 2048`); certwright's is the Local CA (ECDSA P-256)
 * with its RSA-2048 RA. Figures go to docs/protocols/scep.md.
 *
 * BENCH_SCEP_WARMUP=<n> (default 1500) enrollments per server go unmeasured first, one at a
 * time, with the window's keys over again: a server runs for days, and until V8 has compiled its
 * hot paths certwright's figure is mostly the compiler's (scepserver is compiled ahead of time;
 * its figure does not move with the warm-up; docs/protocols/scep.md, "Warm servers");
 * BENCH_SCEP_CONCURRENCY=<n> (default 2) clients at a
 * time; BENCH_SCEP_ONLY=certwright|scepserver measures one side alone; BENCH_SCEP_PROFILE=<dir>
 * writes a V8 CPU profile of certwright's measured window there (bench/support/scep-server.ts);
 * BENCH_SCEP_KEYS=<dir> keeps the clients' keys there for the next run; BENCH_SCEP_WINDOWS=<k>
 * prints certwright's CPU per enrollment for each k-th of the window (does the JIT settle?);
 * BENCH_SCEP_NODE_FLAGS="<flags>" starts certwright's server with these node flags.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { postgresBackendsCpuMs } from './support/postgres-backends.js';
import { backgroundThreadsCpuMs, processCpuMs } from './support/proc-cpu.js';

const n = Number(process.argv[2] ?? '100');
const engine = process.argv[3] ?? 'pglite';
const CONCURRENCY = Number(process.env.BENCH_SCEP_CONCURRENCY ?? '2');
const WARMUP = Number(process.env.BENCH_SCEP_WARMUP ?? '1500');
/** Report the server's CPU per enrollment for each of this many consecutive parts of the window. */
const WINDOWS = Number(process.env.BENCH_SCEP_WINDOWS ?? '1');
/** Extra node flags for certwright's server process (V8 traces, heap sizes), space-separated. */
const serverFlags = (process.env.BENCH_SCEP_NODE_FLAGS ?? '').split(' ').filter(Boolean);
const CHALLENGE = 'bench-challenge';

const dir = mkdtempSync(join(tmpdir(), 'cw-bench-scep-'));
const children: ChildProcess[] = [];

function exec(cmd: string, args: string[], cwd = dir): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, encoding: 'utf8', timeout: 120_000 }, (error, out, err) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, out, err });
    });
  });
}

/**
 * One pre-generated key per measured enrollment, shared by both servers (the warm-up goes through
 * them again). BENCH_SCEP_KEYS=<dir> keeps them there (`key-<i>.pem`) and reuses them in the next
 * run: on a loaded machine generating hundreds of RSA keys takes minutes, and interleaved
 * before/after runs need the same keys.
 */
async function keys(): Promise<string[]> {
  const out: string[] = [];
  const keep = process.env.BENCH_SCEP_KEYS;
  if (keep) mkdirSync(keep, { recursive: true });
  for (let i = 0; i < n; i++) {
    const file = join(keep ?? dir, `key-${i}.pem`);
    if (keep && existsSync(file)) {
      out.push(file);
      continue;
    }
    const r = await exec('openssl', ['genrsa', '-traditional', '-out', file, '2048']);
    if (r.code !== 0) throw new Error(`openssl genrsa failed: ${r.err}`);
    out.push(file);
  }
  return out;
}

async function enrollAll(
  label: string,
  url: string,
  pid: number,
  keyFiles: string[],
  extra: string[],
  marks: {
    start?: () => Promise<unknown>;
    end?: () => Promise<ServerCounts | undefined>;
    /** The database's CPU so far, when it runs outside the server process (PostgreSQL). */
    backendCpuMs?: () => Promise<number>;
  } = {},
  /** Failed enrollments tried again (scepserver only: its file depot now and then refuses one of two concurrent requests). */
  retry = 0,
): Promise<{
  perSecond: number;
  /** Server process CPU per enrollment, plus its database's share where that is outside it. */
  cpuMs: number;
  dbCpuMs?: number;
  retried: number;
  /** Of cpuMs, the threads other than the main one (V8's compiler and GC helpers, libuv's pool). */
  backgroundCpuMs: number;
  statements?: number;
  pipelineCpuMs?: number;
  systemCpuMs?: number;
}> {
  let retried = 0;
  let measuring = false;
  let done = 0;
  let windowMark = { cpu: 0, background: 0, at: 0 };
  const windowSize = Math.max(1, Math.floor(n / WINDOWS));
  const once = async (i: number, attempt = 0): Promise<void> => {
    const work = join(dir, `${label}-${i}-${attempt}`);
    mkdirSync(work);
    copyFileSync(keyFiles[i % keyFiles.length]!, join(work, 'key.pem'));
    const r = await exec(
      'scepclient',
      [
        '-server-url',
        url,
        '-private-key',
        'key.pem',
        '-certificate',
        'cert.pem',
        '-challenge',
        CHALLENGE,
        '-cn',
        `device-${i}.scep.bench.test`,
        ...extra,
      ],
      work,
    );
    if (r.code !== 0 && attempt < retry) {
      if (measuring) retried++;
      return once(i, attempt + 1);
    }
    if (r.code !== 0)
      throw new Error(
        `${label}: scepclient failed (exit ${r.code}): ${r.err.slice(-1500)} ${r.out.slice(-500)}`,
      );
    if (measuring && WINDOWS > 1 && ++done % windowSize === 0) {
      const cpu = processCpuMs(pid);
      const background = backgroundThreadsCpuMs(pid);
      const count = done - windowMark.at;
      console.error(
        `${label}: enrollments ${WARMUP + windowMark.at + 1}–${WARMUP + done}: ${((cpu - windowMark.cpu) / count).toFixed(2)} ms CPU each, background threads ${((background - windowMark.background) / count).toFixed(2)} ms`,
      );
      windowMark = { cpu, background, at: done };
    }
  };
  for (let i = 0; i < WARMUP; i++) await once(i);
  let next = WARMUP;
  await marks.start?.();
  const db0 = marks.backendCpuMs ? await marks.backendCpuMs() : 0;
  const cpu0 = processCpuMs(pid);
  const background0 = backgroundThreadsCpuMs(pid);
  windowMark = { cpu: cpu0, background: background0, at: 0 };
  const t0 = performance.now();
  measuring = true;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n + WARMUP) await once(next++);
    }),
  );
  const ms = performance.now() - t0;
  // A refused attempt did most of an enrollment's work: CPU is per request answered.
  const cpuMs = (processCpuMs(pid) - cpu0) / (n + retried);
  const backgroundCpuMs = (backgroundThreadsCpuMs(pid) - background0) / (n + retried);
  const dbCpuMs = marks.backendCpuMs ? ((await marks.backendCpuMs()) - db0) / (n + retried) : undefined;
  const counted = await marks.end?.();
  return {
    perSecond: (n / ms) * 1000,
    cpuMs,
    ...(dbCpuMs === undefined ? {} : { dbCpuMs }),
    retried,
    backgroundCpuMs,
    ...(counted === undefined
      ? {}
      : {
          statements: counted.statements / n,
          pipelineCpuMs: counted.pipelineUs / 1000 / n,
          systemCpuMs: counted.systemUs / 1000 / n,
        }),
  };
}

/** What the certwright server counts between two SIGUSR2. */
interface ServerCounts {
  statements: number;
  pipelineUs: number;
  /** Of the process's CPU, the kernel's (system) share. */
  systemUs: number;
}

/** The server's `{port, …}` line; other output (V8 traces of BENCH_SCEP_NODE_FLAGS) goes to stderr. */
function waitForLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.startsWith('{"port"')) resolve(line);
        else process.stderr.write(`${line}\n`);
      }
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
}

async function certwright(keyFiles: string[]) {
  const script = fileURLToPath(new URL('./support/scep-server.ts', import.meta.url));
  const child = spawn(
    process.execPath,
    [...serverFlags, '--conditions=source', '--import', 'tsx', script, engine, CHALLENGE],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  // The server's stderr passes through; its `statements <n>` lines answer SIGUSR2.
  let counted: ((n: ServerCounts) => void) | undefined;
  child.stderr!.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    const m = /statements (\d+) pipeline_us (\d+) system_us (\d+)/.exec(text);
    if (m && counted) counted({ statements: Number(m[1]), pipelineUs: Number(m[2]), systemUs: Number(m[3]) });
    else process.stderr.write(text);
  });
  const statements = () =>
    new Promise<ServerCounts>((resolve) => {
      counted = resolve;
      child.kill('SIGUSR2');
    });
  children.push(child);
  const { port, raFingerprint, database } = JSON.parse(await waitForLine(child)) as {
    port: number;
    raFingerprint: string;
    database?: string;
  };
  // The Local CA is ECDSA: scepclient 2.1 must be told which certificate of GetCACert is the RA.
  const result = await enrollAll(
    'certwright',
    `http://127.0.0.1:${port}/scep`,
    child.pid!,
    keyFiles,
    ['-ca-fingerprint', raFingerprint],
    {
      start: statements,
      end: statements,
      ...(database ? { backendCpuMs: postgresBackendsCpuMs(database) } : {}),
    },
  );
  child.kill('SIGTERM');
  return result;
}

async function scepserver(keyFiles: string[]) {
  const depot = join(dir, 'depot');
  const init = await exec('scepserver', ['ca', '-init', '-depot', depot, '-keySize', '2048']);
  if (init.code !== 0) throw new Error(`scepserver ca -init failed: ${init.err}`);
  const sock = join(dir, 'scepserver.sock');
  const pidFile = join(dir, 'scepserver.pid');
  // Loopback-only network namespace; socat carries the port out over a UNIX socket.
  const inner = spawn(
    'unshare',
    [
      '-n',
      'sh',
      '-c',
      `ip link set lo up && (scepserver -depot '${depot}' -port 18080 -challenge '${CHALLENGE}' -allowrenew 0 >/dev/null 2>&1 & echo $! > '${pidFile}'; wait) & ` +
        `sleep 0.5; exec socat UNIX-LISTEN:'${sock}',fork TCP:127.0.0.1:18080`,
    ],
    { stdio: 'ignore', detached: true },
  );
  children.push(inner);
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const outer = spawn('socat', [`TCP-LISTEN:${port},bind=127.0.0.1,fork,reuseaddr`, `UNIX-CONNECT:${sock}`], {
    stdio: 'ignore',
  });
  children.push(outer);
  await new Promise((r) => setTimeout(r, 1500));
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  const result = await enrollAll('scepserver', `http://127.0.0.1:${port}/scep`, pid, keyFiles, [], {}, 3);
  try {
    process.kill(pid, 'SIGTERM');
  } catch {}
  outer.kill('SIGTERM');
  try {
    process.kill(-inner.pid!, 'SIGTERM');
  } catch {}
  return result;
}

try {
  const keyFiles = await keys();
  // BENCH_SCEP_ONLY=certwright|scepserver measures one side alone (the other row reads n/a).
  const only = process.env.BENCH_SCEP_ONLY;
  const skipped: Awaited<ReturnType<typeof enrollAll>> = {
    perSecond: Number.NaN,
    cpuMs: Number.NaN,
    retried: 0,
    backgroundCpuMs: Number.NaN,
  };
  const cw = only === 'scepserver' ? skipped : await certwright(keyFiles);
  if (only !== 'scepserver') {
    const count = engine === 'postgres' ? `, ${cw.statements?.toFixed(1)} SQL statements each` : '';
    const split =
      CONCURRENCY === 1
        ? ` (enrollment pipeline ${cw.pipelineCpuMs?.toFixed(2)} ms, the rest ${(cw.cpuMs - (cw.pipelineCpuMs ?? 0)).toFixed(2)} ms; kernel ${cw.systemCpuMs?.toFixed(2)} ms of the whole)`
        : '';
    const db = cw.dbCpuMs === undefined ? '' : ` + ${cw.dbCpuMs.toFixed(2)} ms PostgreSQL`;
    console.log(
      `certwright: ${cw.cpuMs.toFixed(2)} ms server CPU each (background threads ${cw.backgroundCpuMs.toFixed(2)} ms)${db}${split}${count}`,
    );
  }
  const ms = only === 'certwright' ? skipped : await scepserver(keyFiles);
  const cwTotal = cw.cpuMs + (cw.dbCpuMs ?? 0);
  const rows: [string, string][] = [
    [
      'micromdm scepserver 2.1 (Go, file depot)',
      `${ms.perSecond.toFixed(1)} /s, ${ms.cpuMs.toFixed(2)} ms server CPU each${ms.retried > 0 ? ` (${ms.retried} refused and retried, counted as requests)` : ''}`,
    ],
    [
      `certwright (${engine})`,
      `${cw.perSecond.toFixed(1)} /s, ${
        cw.dbCpuMs === undefined
          ? cw.cpuMs.toFixed(2)
          : `${cw.cpuMs.toFixed(2)} + ${cw.dbCpuMs.toFixed(2)} PostgreSQL = ${cwTotal.toFixed(2)}`
      } ms server CPU each`,
    ],
    // Above 1: certwright spends more CPU per enrollment than scepserver (with its database's share).
    ['CPU per enrollment, certwright / scepserver', (cwTotal / ms.cpuMs).toFixed(2)],
  ];
  console.log(
    `\n| PKCSReq with scepclient, n = ${n}, ${CONCURRENCY} clients at a time | result |\n|---|---|`,
  );
  for (const [name, value] of rows) console.log(`| ${name} | ${value} |`);
} finally {
  for (const child of children) {
    try {
      child.kill('SIGTERM');
    } catch {}
  }
  rmSync(dir, { recursive: true, force: true });
}
