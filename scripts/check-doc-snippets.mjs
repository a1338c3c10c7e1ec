#!/usr/bin/env node
// `pnpm check:snippets`: every TypeScript snippet of README.md and docs/hosting/*.md is a file
// under examples/, so what the docs show is what CI type-checks and runs (check:examples).
// A ```ts block must follow a marker line naming its file, and be that file byte for byte:
//   <!-- snippet: examples/express/src/main.ts -->
// or, for a few lines that are no program (an order of calls), say so:
//   <!-- fragment: why it is not a file -->
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const docs = [
  'README.md',
  ...readdirSync(join(root, 'docs/hosting'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/hosting/${f}`),
];
const BLOCK = /^```(?:ts|typescript)\n([\s\S]*?)^```$/gm;
const MARKER = /<!--\s*(snippet|fragment):\s*(.*?)\s*-->\s*$/;

const problems = [];
let checked = 0;
for (const doc of docs) {
  const text = readFileSync(join(root, doc), 'utf8');
  for (const block of text.matchAll(BLOCK)) {
    const line = text.slice(0, block.index).split('\n').length;
    const before = text.slice(0, block.index).trimEnd().split('\n').at(-1) ?? '';
    const marker = MARKER.exec(before);
    if (!marker) {
      problems.push(
        `${doc}:${line}: a ts snippet without <!-- snippet: examples/… --> (or <!-- fragment: … -->)`,
      );
      continue;
    }
    if (marker[1] === 'fragment') continue;
    const file = marker[2];
    if (!file.startsWith('examples/') || !existsSync(join(root, file))) {
      problems.push(`${doc}:${line}: ${file} is not a file under examples/`);
      continue;
    }
    checked += 1;
    if (readFileSync(join(root, file), 'utf8') !== block[1]) {
      problems.push(`${doc}:${line}: the snippet differs from ${file} (copy the file into the doc)`);
    }
  }
}
for (const problem of problems) console.error(problem);
console.log(`check-doc-snippets: ${checked} snippets match their example files, ${problems.length} problems`);
if (problems.length) process.exitCode = 1;
