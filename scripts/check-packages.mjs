#!/usr/bin/env node
// `pnpm check:packages` (after check:deps and the build): checks what npm would receive, the
// packed tarballs themselves, not the package folders.
//   1. `pnpm pack` every published package once, into .pack/ (pnpm applies `publishConfig` and
//      replaces `workspace:` ranges there, as `pnpm publish` does; check:examples installs these
//      same tarballs).
//   2. Each tarball must hold LICENSE (the root's, byte for byte), README.md and CHANGELOG.md;
//      its package.json must have no `source` export condition (docs/development.md, "What is
//      published") and no `workspace:` range left.
//   3. publint (strict: warnings fail too) on the tarball's bytes, and are-the-types-wrong
//      (ESM-only profile) on the tarball file, for the packages that ship types.
// The per-package checks run two at a time: the machine has two cores and attw is CPU-bound.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const PACK_DIR = join(root, '.pack');
const CONCURRENCY = Number(process.env.CHECK_PACKAGES_CONCURRENCY ?? 2);
const REQUIRED_FILES = ['LICENSE', 'README.md', 'CHANGELOG.md'];

/** Every package under packages/ that is not private, with its folder. */
export function publishedPackages() {
  return readdirSync(join(root, 'packages'))
    .map((dir) => ({
      dir: join(root, 'packages', dir),
      manifest: readJson(join(root, 'packages', dir, 'package.json')),
    }))
    .filter(({ manifest }) => manifest && !manifest.private);
}

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

/** `@certwright/core@3.0.0` → the file name `pnpm pack` gives it. */
export function tarballName({ name, version }) {
  return `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`;
}

/** Packs every published package into PACK_DIR (emptied first) with one recursive pnpm call. */
export async function packAll() {
  rmSync(PACK_DIR, { recursive: true, force: true });
  mkdirSync(PACK_DIR, { recursive: true });
  await run('pnpm', ['-r', '--filter', './packages/**', 'pack', '--pack-destination', PACK_DIR], {
    cwd: root,
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** Paths listed in a condition tree (`exports`) under the `source` condition, at any depth. */
function sourceConditions(value, path = 'exports') {
  if (!value || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) =>
    key === 'source' ? [`${path}.source`] : sourceConditions(inner, `${path}["${key}"]`),
  );
}

/** The condition tree with every `source` condition removed, keys in their order. */
function withoutSource(value) {
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'source')
      .map(([key, inner]) => [key, withoutSource(inner)]),
  );
}

function workspaceRanges(manifest) {
  const found = [];
  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
    for (const [name, range] of Object.entries(manifest[field] ?? {})) {
      if (String(range).startsWith('workspace:')) found.push(`${field}.${name}: ${range}`);
    }
  }
  return found;
}

async function checkTarball({ manifest }, rootLicense) {
  const problems = [];
  const file = join(PACK_DIR, tarballName(manifest));
  const unpacked = mkdtempSync(join(tmpdir(), 'certwright-pack-'));
  try {
    await run('tar', ['-xzf', file, '-C', unpacked]);
    const dir = join(unpacked, 'package');
    const present = new Set(readdirSync(dir));
    for (const required of REQUIRED_FILES) {
      if (!present.has(required)) problems.push(`${required} is missing from the tarball`);
    }
    if (present.has('LICENSE') && !readFileSync(join(dir, 'LICENSE')).equals(rootLicense)) {
      problems.push('LICENSE differs from the repository root LICENSE');
    }
    const packed = readJson(join(dir, 'package.json'));
    for (const path of sourceConditions(packed.exports)) problems.push(`published manifest keeps ${path}`);
    // publishConfig.exports is a second copy of the map: it must say what `exports` says, less `source`.
    if (JSON.stringify(packed.exports) !== JSON.stringify(withoutSource(manifest.exports))) {
      problems.push(
        'published exports are not the workspace exports without `source` (update publishConfig.exports)',
      );
    }
    for (const range of workspaceRanges(packed)) problems.push(`published manifest keeps ${range}`);
  } finally {
    rmSync(unpacked, { recursive: true, force: true });
  }

  const tarball = readFileSync(file);
  const lint = await publint({
    pack: { tarball: tarball.buffer.slice(tarball.byteOffset, tarball.byteOffset + tarball.byteLength) },
    strict: true,
  });
  for (const message of lint.messages) {
    if (message.type === 'suggestion') continue;
    problems.push(`publint ${message.type}: ${formatMessage(message, lint.pkg) ?? message.code}`);
  }

  // attw only means something for packages that ship type declarations (not the web console).
  const hasTypes = JSON.stringify(manifest.exports ?? {}).includes('"types"');
  if (hasTypes) {
    try {
      await run(
        join(root, 'node_modules/.bin/attw'),
        [
          file,
          '--profile',
          'esm-only',
          '--ignore-rules',
          'cjs-resolves-to-esm',
          '--format',
          'ascii',
          '--no-color',
        ],
        { cwd: root, maxBuffer: 16 * 1024 * 1024 },
      );
    } catch (error) {
      problems.push(`are-the-types-wrong:\n${error.stdout || error.message}`);
    }
  }
  return problems;
}

/** Runs `task` over `items`, at most `limit` at a time, keeping the results in order. */
async function pool(items, limit, task) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

async function main() {
  const packages = publishedPackages();
  const started = Date.now();
  await packAll();
  console.log(`packed ${packages.length} packages into .pack/ in ${Date.now() - started} ms`);
  const rootLicense = readFileSync(join(root, 'LICENSE'));
  const results = await pool(packages, CONCURRENCY, async (pkg) => {
    const problems = await checkTarball(pkg, rootLicense);
    console.log(`${problems.length ? 'FAIL' : 'ok  '} ${pkg.manifest.name}@${pkg.manifest.version}`);
    return { name: pkg.manifest.name, problems };
  });
  const failed = results.filter((r) => r.problems.length);
  for (const { name, problems } of failed) {
    console.error(`\n${name}:`);
    for (const problem of problems) console.error(`  - ${problem}`);
  }
  console.log(
    `\ncheck-packages: ${packages.length - failed.length}/${packages.length} clean in ${Date.now() - started} ms`,
  );
  if (failed.length) process.exitCode = 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
