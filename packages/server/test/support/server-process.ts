import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
/** `pnpm start`'s entry: bootstraps TLS files and a key, then runs the server. */
export const QUICKSTART = fileURLToPath(new URL('../../src/quickstart.ts', import.meta.url));

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

/** Runs certwright-server (or another entry) from its sources in a child process, as an operator would. */
export function runServer(
  env: Record<string, string>,
  entry = MAIN,
): {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
} {
  // PGlite allows one process per data directory: every server gets its own, removed when it exits
  // (a caller that names SVC_DATA_DIR keeps its directory).
  const dataDir = env.SVC_DATA_DIR === undefined ? mkdtempSync(join(tmpdir(), 'cw-data-')) : undefined;
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', entry], {
    env: {
      PATH: process.env.PATH ?? '',
      SVC_LOG_LEVEL: 'info',
      ...(dataDir === undefined ? {} : { SVC_DATA_DIR: dataDir }),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout?.on('data', (d) => {
    text += d;
  });
  child.stderr?.on('data', (d) => {
    text += d;
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
      resolve(code);
    }),
  );
  return { child, output: () => text, exited };
}

/**
 * How long a server may take to log "ready". Generous: the machine's cores are shared, and a
 * process that loads its TypeScript sources through tsx can take long to start under load.
 */
const START_TIMEOUT_MS = 150_000;

/** Starts the server and waits for its "ready" log line; fails (and kills it) otherwise. */
export async function startServerProcess(env: Record<string, string>, entry = MAIN): Promise<ServerProcess> {
  const run = runServer({ SVC_LISTEN_ADDR: '127.0.0.1', SVC_PORT: '0', ...env }, entry);
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Never leave a server behind: a test that gives up on it would leak the process.
      run.child.kill('SIGKILL');
      reject(new Error(`server did not start within ${START_TIMEOUT_MS} ms:\n${run.output()}`));
    }, START_TIMEOUT_MS);
    const check = () => {
      const match = /"url":"https:\/\/127\.0\.0\.1:(\d+)".*"msg":"certwright-server ready"/.exec(
        run.output(),
      );
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    run.child.stdout?.on('data', check);
    run.exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`server exited:\n${run.output()}`));
    });
  });
  return { ...run, port };
}
