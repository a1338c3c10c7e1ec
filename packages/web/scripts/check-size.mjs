#!/usr/bin/env node
// After `vite build`: the JavaScript a first visit loads (the entry script and the modules it
// preloads, as index.html names them) must stay within 150 kB gzipped. Prints the figure.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const LIMIT = 150 * 1024;
const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const html = readFileSync(join(dist, 'index.html'), 'utf8');
const initial = [
  ...html.matchAll(/<script[^>]+src="([^"]+\.js)"/g),
  ...html.matchAll(/<link[^>]+rel="modulepreload"[^>]+href="([^"]+\.js)"/g),
].map((m) => m[1]);
if (initial.length === 0) {
  console.error('check-size: index.html names no script');
  process.exit(1);
}
let total = 0;
for (const src of new Set(initial)) {
  const gz = gzipSync(readFileSync(join(dist, src.replace(/^\//, '')))).length;
  total += gz;
  console.log(`  ${src}: ${(gz / 1024).toFixed(1)} kB gzipped`);
}
console.log(`web: initial JavaScript ${(total / 1024).toFixed(1)} kB gzipped (limit ${LIMIT / 1024} kB)`);
if (total > LIMIT) {
  console.error('web: the initial JavaScript is over the limit; split more routes into their own chunks');
  process.exit(1);
}
