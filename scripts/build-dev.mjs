#!/usr/bin/env node
import { execFileSync } from 'node:child_process';
// `pnpm build:dev` (run by `pnpm start`): builds the JavaScript of every package that changed
// since its last build, without type declarations. Declarations are for publishing and
// type-checking (`pnpm build`, `pnpm typecheck`), not for starting the server.
//
// Each package's dist/ carries a stamp: a SHA-256 over everything that decides its JavaScript
// (its src/ files, package.json, tsup and tsconfig files, the tsup version and this script).
// The stamp is removed before a build and written only after it succeeds, so a dist/ whose
// stamp matches the sources is never stale, and any change rebuilds that package. Packages
// import each other as external dependencies, so a change rebuilds only its own package.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const STAMP = '.dev-build-stamp';
const force = process.argv.includes('--force');
const quiet = process.argv.includes('--quiet');
const say = (line) => {
  if (!quiet) process.stderr.write(`${line}\n`);
};

function files(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...files(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

function readStamp(dir) {
  try {
    return readFileSync(join(dir, 'dist', STAMP), 'utf8');
  } catch {
    return undefined;
  }
}

function inputsHash(pkgDir, common) {
  const hash = createHash('sha256').update(common);
  const inputs = [
    ...files(join(pkgDir, 'src')),
    ...['package.json', 'tsup.config.ts', 'tsconfig.json'].map((f) => join(pkgDir, f)).filter(existsSync),
  ].sort();
  for (const file of inputs) {
    hash.update(`\0${relative(pkgDir, file)}\0`).update(readFileSync(file));
  }
  return hash.digest('hex');
}

/** One build at a time per clone: two `pnpm start` at once must not write the same dist/. */
async function withLock(run) {
  const lock = join(root, 'node_modules', '.cache', 'certwright-build-dev.lock');
  mkdirSync(dirname(lock), { recursive: true });
  for (let waited = 0; ; waited += 200) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      // A lock older than two minutes belongs to a build that died; take it over.
      const age = Date.now() - statSync(lock, { throwIfNoEntry: false })?.mtimeMs;
      if (age > 120_000) rmSync(lock, { recursive: true, force: true });
      if (waited === 0) say('build:dev: waiting for another build to finish');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    return await run();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

const packagesDir = join(root, 'packages');
const packages = readdirSync(packagesDir)
  .map((name) => join(packagesDir, name))
  .filter((dir) => existsSync(join(dir, 'tsup.config.ts')))
  .sort();

const tsupVersion = JSON.parse(
  readFileSync(join(root, 'node_modules', 'tsup', 'package.json'), 'utf8'),
).version;
const common = [
  tsupVersion,
  readFileSync(fileURLToPath(import.meta.url)),
  readFileSync(join(root, 'tsconfig.base.json')),
].join('\0');

const started = Date.now();
const built = await withLock(async () => {
  const stale = packages
    .map((dir) => ({ dir, hash: inputsHash(dir, common) }))
    .filter(({ dir, hash }) => force || readStamp(dir) !== hash);
  if (stale.length === 0) return [];
  const { build } = await import('tsup');
  const cwd = process.cwd();
  try {
    // One after another: tsup resolves entries and outDir against the working directory.
    for (const { dir, hash } of stale) {
      rmSync(join(dir, 'dist', STAMP), { force: true });
      process.chdir(dir);
      // esbuild's service keeps the working directory it started in: name the package's own.
      await build({
        dts: false,
        silent: true,
        esbuildOptions(options) {
          options.absWorkingDir = dir;
        },
      });
      writeFileSync(join(dir, 'dist', STAMP), hash);
    }
  } finally {
    process.chdir(cwd);
  }
  return stale.map(({ dir }) => relative(root, dir));
});
// The web console (packages/web) is a Vite build, not tsup: same stamp scheme over its sources.
const webDir = join(packagesDir, 'web');
if (existsSync(join(webDir, 'vite.config.ts'))) {
  const hash = createHash('sha256').update(common);
  const inputs = [
    ...files(join(webDir, 'src')),
    ...['index.html', 'package.json', 'vite.config.ts'].map((f) => join(webDir, f)).filter(existsSync),
  ].sort();
  for (const file of inputs) hash.update(`\0${relative(webDir, file)}\0`).update(readFileSync(file));
  const digest = hash.digest('hex');
  const vite = join(webDir, 'node_modules', 'vite', 'bin', 'vite.js');
  if (!existsSync(vite)) {
    say(
      'build:dev: packages/web has no vite installed (pnpm install); the server starts without the web console',
    );
  } else if (force || readStamp(webDir) !== digest) {
    const began = Date.now();
    await withLock(async () => {
      rmSync(join(webDir, 'dist', STAMP), { force: true });
      execFileSync(process.execPath, [vite, 'build', '--logLevel', 'warn'], {
        cwd: webDir,
        stdio: 'inherit',
      });
      writeFileSync(join(webDir, 'dist', STAMP), digest);
    });
    say(`build:dev: built packages/web in ${((Date.now() - began) / 1000).toFixed(1)} s`);
  }
}
// The server's version answer names the commit: refreshed on every run, since an unchanged
// dist/ may well belong to a newer commit (e.g. one that only changed docs).
for (const dir of packages) {
  const script = join(dir, 'scripts', 'build-info.mjs');
  if (existsSync(script)) execFileSync(process.execPath, [script], { stdio: 'inherit' });
}
say(
  built.length === 0
    ? 'build:dev: every package is up to date'
    : `build:dev: built ${built.join(', ')} (JavaScript only) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
);
