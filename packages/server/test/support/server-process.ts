import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { copyMigratedPgliteDataDir } from '@certwright/storage-pg/testing';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
/** The CLI with the test-only loopback opt-in for identity providers and ACME directories. */
export const LOOPBACK_ENTRY = fileURLToPath(new URL('./loopback-entry.ts', import.meta.url));
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
  /** A data directory made for this run, removed when it exits (see startServerProcess). */
  ownDataDir?: string,
): {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
} {
  // PGlite allows one process per data directory: every server gets its own, removed when it exits
  // (a caller that names SVC_DATA_DIR keeps its directory).
  const dataDir =
    ownDataDir ?? (env.SVC_DATA_DIR === undefined ? mkdtempSync(join(tmpdir(), 'cw-data-')) : undefined);
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
 * Runs an operations command of certwright-server (`rekey`, `backup`, `restore`) from its sources,
 * with only the environment given (and PATH).
 */
export function runServerCommand(
  args: readonly string[],
  env: Record<string, string>,
): { child: ChildProcess; stdout: () => string; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', MAIN, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    err += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

/**
 * How long a server may take to log "ready". Generous: the machine's cores are shared, and a
 * process that loads its TypeScript sources through tsx can take long to start under load.
 */
const START_TIMEOUT_MS = 150_000;

/**
 * A data directory that already holds a migrated embedded database and the key it is sealed
 * under, as a first start leaves it (docs/development.md): a server started on it skips initdb and
 * the migrations, seconds of each start.
 */
async function migratedDataDir(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'cw-data-'));
  const { key } = await copyMigratedPgliteDataDir(join(dir, 'pglite'));
  writeFileSync(join(dir, 'encryption-key'), `${Buffer.from(key).toString('base64')}\n`, { mode: 0o600 });
  return dir;
}

/**
 * Starts the server and waits for its "ready" log line; fails (and kills it) otherwise. Unless the
 * test names its own data directory, database or key (or asks for `fresh` — a test of a first
 * start), the server starts on a copy of a migrated data directory.
 */
export async function startServerProcess(
  env: Record<string, string>,
  entry = MAIN,
  options: { fresh?: boolean } = {},
): Promise<ServerProcess> {
  const ownsData =
    !options.fresh &&
    env.SVC_DATA_DIR === undefined &&
    env.SVC_DATABASE_URL === undefined &&
    env.SVC_ENCRYPTION_KEY === undefined;
  const dataDir = ownsData ? await migratedDataDir() : undefined;
  const run = runServer(
    { SVC_LISTEN_ADDR: '127.0.0.1', SVC_PORT: '0', ...env, ...(dataDir ? { SVC_DATA_DIR: dataDir } : {}) },
    entry,
    dataDir,
  );
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
