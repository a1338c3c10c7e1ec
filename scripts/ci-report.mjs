#!/usr/bin/env node
// Prints the end-of-run report of `.ci/run`: its phases with their seconds (a file of
// `name<TAB>seconds<TAB>status` lines) and, for each test run, the ten test files that held a
// worker longest (the JSON lines scripts/test-timings-reporter.ts writes).
//   node scripts/ci-report.mjs PHASES_FILE [TIMINGS_FILE …]
import { existsSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';

const [phasesFile, ...timingFiles] = process.argv.slice(2);

const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);

if (phasesFile && existsSync(phasesFile)) {
  const rows = readFileSync(phasesFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split('\t'));
  const width = Math.max(5, ...rows.map(([name]) => name.length));
  const total = rows.reduce((sum, [, seconds]) => sum + Number(seconds), 0);
  console.log('\n== phases');
  console.log(`${pad('phase', width)}  ${lpad('seconds', 7)}  status`);
  for (const [name, seconds, status] of rows)
    console.log(`${pad(name, width)}  ${lpad(seconds, 7)}  ${status}`);
  console.log(`${pad('total', width)}  ${lpad(total, 7)}  (${(total / 60).toFixed(1)} min)`);
}

for (const file of timingFiles) {
  if (!existsSync(file)) continue;
  const rows = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .sort((a, b) => b.seconds - a.seconds);
  const sum = rows.reduce((s, r) => s + r.seconds, 0);
  console.log(
    `\n== slowest test files (${basename(file, '.jsonl')}: ${rows.length} files, ${Math.round(sum)} s held in all)`,
  );
  console.log(`${lpad('seconds', 7)}  ${lpad('import', 6)}  file`);
  for (const r of rows.slice(0, 10)) {
    const mark = r.state === 'passed' ? '' : `  (${r.state})`;
    console.log(
      `${lpad(r.seconds.toFixed(1), 7)}  ${lpad(r.collect_seconds.toFixed(1), 6)}  ${r.file}${mark}`,
    );
  }
}
