import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The last release (2.0.0): the "N-1" of docs/operations/upgrades.md. */
export const RELEASE_COMMIT = '10de4dd';
export const RELEASE_VERSION = '2.0.0';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * What the release's server needs at run time: @certwright/server and the workspace packages it
 * imports (`pnpm --filter '@certwright/server...'` lists them). packages/web is among its
 * dependencies but is a Vite build of the console, which the server serves only when built; the
 * API and the protocols do not need it.
 */
const SERVER_PACKAGES = [
  'core',
  'notify-smtp',
  'storage-sql',
  'key-custody-pkcs11',
  'protocols',
  'queue-redis',
  'storage-mysql',
  'storage-pg',
  'api',
  'client',
  'server',
];

/**
 * Outside the clone, so one machine builds each release once whatever its clones and worktrees
 * (and `git clean` never removes it).
 */
export function releaseDir(): string {
  const cache = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cache, 'certwright-ci', `release-${RELEASE_COMMIT}`);
}

/** Why the release cannot be built from this clone, or undefined when it can. */
export function releaseSkipReason(): string | undefined {
  if (existsSync(join(releaseDir(), 'READY'))) return undefined;
  const found = spawnSync('git', ['-C', REPO, 'cat-file', '-e', `${RELEASE_COMMIT}^{commit}`]);
  if (found.status !== 0) {
    return `commit ${RELEASE_COMMIT} (release ${RELEASE_VERSION}) is not in this clone (a shallow clone? git fetch --unshallow)`;
  }
  return undefined;
}

export interface ReleaseBuild {
  /** The release server's entry, run with plain `node` (built JavaScript, no tsx). */
  main: string;
  /** Milliseconds this call spent building; 0 when the cache already held the build. */
  builtMs: number;
}

/**
 * The release's server, built once per machine: `git archive` of the commit into a directory
 * beside the cache, `pnpm install --frozen-lockfile --prefer-offline` of the server's packages
 * (the lockfile of the release, so the very dependencies it shipped with), then each package's
 * JavaScript with the release's own tsup (no type declarations: nothing type-checks against it).
 * Written aside and renamed into place with a READY marker, so a build that died half way is
 * never taken for a good one, and two test runs at once each end with a whole copy.
 */
export function ensureRelease(): ReleaseBuild {
  const dir = releaseDir();
  const main = join(dir, 'packages', 'server', 'dist', 'main.js');
  if (existsSync(join(dir, 'READY'))) return { main, builtMs: 0 };
  const started = Date.now();
  const partial = `${dir}.${process.pid}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  try {
    const archive = execFileSync('git', ['-C', REPO, 'archive', '--format=tar', RELEASE_COMMIT], {
      maxBuffer: 1 << 30,
    });
    execFileSync('tar', ['-x', '-C', partial], { input: archive });
    execFileSync(
      'pnpm',
      ['install', '--frozen-lockfile', '--prefer-offline', '--filter', '@certwright/server...'],
      { cwd: partial, stdio: 'pipe', env: { ...process.env, CI: '1' } },
    );
    // The release's tsup, driven as its scripts/build-dev.mjs drives it, one package at a time.
    const build = `
      const { build } = await import(${JSON.stringify(join(partial, 'node_modules', 'tsup', 'dist', 'index.js'))});
      for (const dir of ${JSON.stringify(SERVER_PACKAGES.map((p) => join(partial, 'packages', p)))}) {
        process.chdir(dir);
        await build({ dts: false, silent: true, esbuildOptions(o) { o.absWorkingDir = dir; } });
      }`;
    execFileSync(process.execPath, ['--input-type=module', '-e', build], { cwd: partial, stdio: 'pipe' });
    // What the release's build-info script would record from a git checkout (GET /api/v1/version).
    writeFileSync(
      join(partial, 'packages', 'server', 'dist', 'build-info.json'),
      `${JSON.stringify({ version: RELEASE_VERSION, commit: RELEASE_COMMIT, modified: false, build_time: new Date().toISOString() }, null, 2)}\n`,
    );
    writeFileSync(join(partial, 'READY'), `${RELEASE_COMMIT}\n`);
    // A directory without READY is what a killed build left behind.
    if (!existsSync(join(dir, 'READY'))) rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(partial, dir);
    } catch (error) {
      // Another run finished first: its copy is as good as this one.
      if (!existsSync(join(dir, 'READY'))) throw error;
      rmSync(partial, { recursive: true, force: true });
    }
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    const detail = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(
      `building release ${RELEASE_VERSION} (${RELEASE_COMMIT}) in ${dir} failed: ${(error as Error).message}${detail ? `\n${detail}` : ''}`,
    );
  }
  return { main, builtMs: Date.now() - started };
}
