#!/usr/bin/env node
// `pnpm check:deps`: every package declares exactly what its published code imports.
//   - a package its src/ imports (tests excluded) must be a dependency or peer dependency;
//   - a dependency that no file of src/ imports is reported as unused (a peer dependency may
//     only state which host versions the package works with, e.g. Express);
//   - a package only tests import belongs in devDependencies (or the root's).
// Imports are read with a regular expression over `import … from`, `export … from`,
// `import('…')` and bare `import '…'`; node: built-ins and relative paths are skipped.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const IMPORT =
  /^\s*(?:import|export)\b[^'";]*?\bfrom\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;
const builtins = new Set(builtinModules);

function files(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return files(path);
    return /\.(ts|tsx|mts|js|mjs)$/.test(entry.name) ? [path] : [];
  });
}

function packageOf(specifier) {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:')) return null;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  return builtins.has(name) ? null : name;
}

function importsOf(paths) {
  const found = new Map();
  for (const path of paths) {
    for (const match of readFileSync(path, 'utf8').matchAll(IMPORT)) {
      const name = packageOf(match[1] ?? match[2] ?? match[3]);
      if (name && !found.has(name)) found.set(name, relative(root, path));
    }
  }
  return found;
}

const isTest = (path) => /\.test\.tsx?$/.test(path) || /\/test\//.test(path);
const problems = [];
const packagesDir = join(root, 'packages');
for (const dirName of readdirSync(packagesDir).sort()) {
  const dir = join(packagesDir, dirName);
  const manifestPath = join(dir, 'package.json');
  if (!existsSync(manifestPath)) continue;
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  const runtime = new Set([
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {}),
  ]);
  const declared = new Set([...runtime, ...Object.keys(manifest.devDependencies ?? {})]);
  const all = [...files(join(dir, 'src')), ...files(join(dir, 'test'))];
  const published = importsOf(all.filter((p) => !isTest(p)));
  const tests = importsOf(all.filter(isTest));
  const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const rootDev = new Set(Object.keys(rootManifest.devDependencies ?? {}));

  for (const [name, where] of published) {
    if (name === manifest.name) continue;
    if (!runtime.has(name)) problems.push(`${manifest.name}: ${where} imports '${name}', not a dependency`);
  }
  for (const name of Object.keys(manifest.dependencies ?? {})) {
    if (!published.has(name)) {
      problems.push(`${manifest.name}: '${name}' is declared but no file of src/ imports it`);
    }
  }
  for (const [name, where] of tests) {
    if (name === manifest.name || declared.has(name) || rootDev.has(name)) continue;
    problems.push(`${manifest.name}: test ${where} imports '${name}', declared nowhere`);
  }
}

if (problems.length > 0) {
  process.stderr.write(`${problems.join('\n')}\n`);
  process.exit(1);
}
process.stdout.write('check:deps: every package declares what it imports, and imports what it declares\n');
