/**
 * `pnpm bench`: runs every benchmark, one after another, each in its own process so that one
 * benchmark's heap and JIT state never colour the next. Benchmarks print tables; they assert
 * nothing and are never part of `pnpm test`.
 *
 *   pnpm bench                 every benchmark at full size
 *   pnpm bench pki storage     only those (names are the file names without .ts)
 *   BENCH_SCALE=0.02 pnpm bench   a quick smoke run at 2% of the row counts
 *   pnpm bench fuzz            the parser fuzz campaign (FUZZ_CASES, FUZZ_TARGETS)
 *   pnpm bench soak [faults]   three instances under mixed load (BENCH_SCALE shortens it)
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const scale = Number(process.env.BENCH_SCALE ?? '1');
const rows = (n: number) => String(Math.max(1000, Math.round(n * scale)));

/** Name → arguments; sizes follow the issues (1,000,000 certificates, 10,000 bulk). */
const BENCHMARKS: Record<string, string[]> = {
  pki: [],
  pipeline: [],
  bridge: [],
  'pki-server': [],
  ocsp: [],
  revocation: [rows(1_000_000)],
  est: [],
  scep: [],
  acme: [],
  'acme-issuer': [],
  storage: [rows(1_000_000)],
  inventory: [rows(1_000_000)],
  web: [rows(1_000_000)],
  template: [],
  webhooks: [],
  hsm: [],
  discovery: [],
  fuzz: [],
  soak: [],
};

// `pnpm bench soak faults`: `faults` is the soak's argument, not a benchmark of its own.
const soakFaults = process.argv.includes('faults');
const selected = process.argv.slice(2).filter((name) => name !== 'faults');
if (soakFaults) BENCHMARKS.soak = ['faults'];
const names = selected.length > 0 ? selected : Object.keys(BENCHMARKS);
let failed = 0;
for (const name of names) {
  const args = BENCHMARKS[name];
  const file = fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
  if (args === undefined || !existsSync(file)) {
    console.error(`unknown benchmark '${name}'; known: ${Object.keys(BENCHMARKS).join(', ')}`);
    failed++;
    continue;
  }
  console.log(`\n=== ${name} ${args.join(' ')}`);
  const result = spawnSync(process.execPath, ['--conditions=source', '--import', 'tsx', file, ...args], {
    stdio: 'inherit',
  });
  if (result.status !== 0) {
    console.error(`benchmark '${name}' exited with ${result.status ?? result.signal}`);
    failed++;
  }
}
process.exit(failed === 0 ? 0 : 1);
