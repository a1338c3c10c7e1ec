/**
 * certwright-server run as an operator runs it — its own process (a primary and workers with
 * SVC_SERVER_WORKERS > 1), configured by SVC_* variables — for benches that measure the server
 * from outside: its CPU is read from /proc for the primary and every worker.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { processCpuMs } from './proc-cpu.js';
import { loopbackTlsIdentity } from './tls-listener.js';

const MAIN = fileURLToPath(new URL('../../packages/server/src/main.ts', import.meta.url));

export interface CliServer {
  child: ChildProcess;
  port: number;
  /** PEM of the TLS certificate the server presents. */
  ca: string;
  /** The primary and its workers (or the one process without workers). */
  pids(): number[];
  /** CPU ms used so far by those processes together. */
  cpuMs(): number;
  output(): string;
  /** SIGTERM, then waits for the primary (which waits for its workers). */
  stop(): Promise<number | null>;
}

/** The children of `pid`, from /proc (every thread's list). */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  try {
    const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    for (const child of text.split(/\s+/)) if (child) found.push(Number(child));
  } catch {
    // The process is gone: no children to count.
  }
  return found;
}

/**
 * Starts the server on 127.0.0.1:`port` with a fresh self-signed P-256 TLS certificate and
 * waits until `workers` "ready" lines were logged. `execArgv` goes before the TypeScript loader
 * (e.g. `--cpu-prof`); node:cluster passes it on to the workers.
 */
export async function startCliServer(
  env: Record<string, string>,
  options: { port: number; workers: number; execArgv?: string[] },
): Promise<CliServer> {
  const dir = mkdtempSync(join(tmpdir(), 'cw-bench-cli-'));
  const { certPem: ca, keyPem } = await loopbackTlsIdentity();
  writeFileSync(join(dir, 'tls.pem'), ca);
  writeFileSync(join(dir, 'tls-key.pem'), keyPem, { mode: 0o600 });
  const child = spawn(
    process.execPath,
    [...(options.execArgv ?? []), '--conditions=source', '--import', 'tsx', MAIN],
    {
      env: {
        PATH: process.env.PATH ?? '',
        SVC_LISTEN_ADDR: '127.0.0.1',
        SVC_PORT: String(options.port),
        SVC_TLS_CERT_PATH: join(dir, 'tls.pem'),
        SVC_TLS_KEY_PATH: join(dir, 'tls-key.pem'),
        SVC_DATA_DIR: join(dir, 'data'),
        SVC_SERVER_WORKERS: String(options.workers),
        SVC_LOG_LEVEL: 'info',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let text = '';
  child.stdout.on('data', (d) => {
    text += d;
  });
  child.stderr.on('data', (d) => {
    text += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not get ready:\n${text.slice(-2000)}`));
    }, 180_000);
    const check = () => {
      if ((text.match(/"msg":"certwright-server ready"/g) ?? []).length >= options.workers) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited ${code}:\n${text.slice(-2000)}`));
    });
  });
  const pids = () => [child.pid!, ...childrenOf(child.pid!)];
  return {
    child,
    port: options.port,
    ca,
    pids,
    cpuMs: () => pids().reduce((sum, pid) => sum + processCpuMs(pid), 0),
    output: () => text,
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}
