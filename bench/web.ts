/**
 * Web console benchmark (not a test; no thresholds): how long the inventory page takes to become
 * interactive at 1,000,000 certificates in PostgreSQL, in Debian's Chromium against the real
 * reference server. "Interactive" is: the first row of the table is rendered and the page's
 * controls respond (the row's selection checkbox is enabled, the pager is drawn). Cases:
 *   - navigation to /certificates (a full page load: scripts, GET /auth/me, the list),
 *   - navigation to a saved filter URL (status=Active, sorted by expiry),
 *   - a search typed into the form and applied (in-page),
 *   - the pager's Next (in-page).
 * Each case reports wall-clock p50 / max of the whole interaction and of the list request it
 * made (request start → response end, as Chromium timed it), so a slow case shows whether the
 * API or the rendering is the cost; the bar is 1 s. The anchor is the same navigation to the
 * owners page (20 rows). The server's CPU per interaction (its own
 * process, from process.cpuUsage) is printed next to it.
 * Usage:
 *   node --import tsx --conditions=source bench/web.ts [inventory=1000000] [runs=10]
 * `pnpm bench web` passes the size (BENCH_SCALE shrinks it). PostgreSQL: a database created for
 * the run on SVC_BENCH_POSTGRES_URL (default the local test server), dropped afterwards.
 * Figures: docs/web.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../packages/core/src/index.js';
import { parseConfig, startServer } from '../packages/server/src/index.js';
import { makeTestPki } from '../packages/server/test/support/openssl-pki.js';
import {
  dist,
  ensureConsoleBuilt,
  haveChromium,
  launchChromium,
} from '../packages/web/test/support/chromium.js';
import { openBenchStorage } from './support/engines.js';
import { createInventoryRefs, fillInventory, sql } from './support/inventory-fill.js';
import { percentiles } from './support/timing.js';

const INVENTORY = Number(process.argv[2] ?? 1_000_000);
const RUNS = Number(process.argv[3] ?? 10);
const SECRET = 'bench-web-secret-0123456789abcdef';
const BAR_MS = 1000;

if (!haveChromium) {
  console.log('web benchmark: skipped, /usr/bin/chromium is missing (apt-get install chromium)');
  process.exit(0);
}
ensureConsoleBuilt(true);

const encryptionKey = randomBytes(32);
const opened = await openBenchStorage('postgres', 'cw-bench-web', { encryptionKey });
const { s, cleanup, url } = opened;
let closeAll: () => Promise<void> = async () => {};
try {
  await s.migrate();
  const refs = await createInventoryRefs(s);
  const started = performance.now();
  await fillInventory(s, refs, 0, INVENTORY, new Date());
  await sql`vacuum analyze certificates`.execute(s.db);
  console.log(
    `web benchmark: ${INVENTORY} certificates filled and analyzed in ${((performance.now() - started) / 1000).toFixed(1)} s; ${RUNS} runs per case, node ${process.version}`,
  );
  await s.close();

  const pki = makeTestPki(['server']);
  const server = await startServer(
    parseConfig({
      SVC_TLS_CERT_PATH: pki.issued.server!.cert,
      SVC_TLS_KEY_PATH: pki.issued.server!.key,
      SVC_AUTH_SECRET: SECRET,
      SVC_LISTEN_ADDR: '127.0.0.1',
      SVC_PORT: '0',
      SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'cw-bench-web-')),
      SVC_DATABASE_URL: url as string,
      SVC_ENCRYPTION_KEY: encryptionKey.toString('base64'),
    }),
    silentLogger,
    { webDir: dist },
  );
  await server.ready;
  const browser = await launchChromium(readFileSync(pki.issued.server!.cert));
  closeAll = async () => {
    await browser.close();
    await server.close();
  };
  const origin = `https://127.0.0.1:${server.port}`;
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${origin}/login`);
  await page.getByLabel('API key', { exact: true }).fill(SECRET);
  await page.getByRole('button', { name: 'Sign in with API key' }).click();
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();

  /** The list requests since the last reset: start (epoch ms) and start → response end (ms). */
  let lists: { start: number; ms: number }[] = [];
  page.on('requestfinished', (request) => {
    if (!/\/api\/v1\/(certificates|owners)\?/.test(request.url())) return;
    const t = request.timing();
    lists.push({ start: t.startTime, ms: t.responseEnd });
  });
  /** Resolves when the first row is there and its checkbox and the pager's Next respond. */
  const interactive = async (firstRow?: string) => {
    const row = page.locator('table tbody tr').first();
    if (firstRow) await row.locator('a', { hasNotText: firstRow }).waitFor();
    else await row.locator('a').waitFor();
    await row.getByRole('checkbox').and(page.locator(':enabled')).waitFor();
    await page
      .getByRole('navigation', { name: 'Pages' })
      .getByText(/^Page \d+ of/)
      .waitFor();
  };
  const firstName = () => page.locator('table tbody tr').first().locator('a').textContent();
  const ms = (xs: number[]) => {
    const p = percentiles(xs);
    return `${p.p50.toFixed(0).padStart(5)} / ${p.max.toFixed(0).padStart(5)}`;
  };
  console.log(
    `  ${'case (ms: p50 / max)'.padEnd(42)} ${'interactive'.padStart(13)} ${'before list'.padStart(13)} ${'list request'.padStart(13)} ${'after list'.padStart(13)}  server+driver CPU p50`,
  );
  /**
   * Runs `act` RUNS + 1 times (the first warms plans, caches and the JIT, and is not counted)
   * and splits each interaction at its list request: before it (page load, scripts, GET
   * /auth/me), the request itself, and after it (rendering until interactive).
   */
  const timed = async (label: string, prepare: () => Promise<void>, act: () => Promise<void>) => {
    const wall: number[] = [];
    const before: number[] = [];
    const api: number[] = [];
    const after: number[] = [];
    const cpu: number[] = [];
    for (let i = 0; i <= RUNS; i++) {
      await prepare();
      lists = [];
      const cpuAtStart = process.cpuUsage();
      const epoch = Date.now();
      const t = performance.now();
      await act();
      const w = performance.now() - t;
      const used = process.cpuUsage(cpuAtStart);
      if (i === 0) continue;
      const list = lists.at(-1);
      if (!list) throw new Error(`${label}: no list request was made`);
      wall.push(w);
      before.push(list.start - epoch);
      api.push(list.ms);
      after.push(w - (list.start - epoch) - list.ms);
      cpu.push((used.user + used.system) / 1000);
    }
    console.log(
      `  ${label.padEnd(42)} ${ms(wall)} ${ms(before)} ${ms(api)} ${ms(after)}  ${percentiles(cpu).p50.toFixed(0)} ms   ${percentiles(wall).max <= BAR_MS ? 'within' : 'OVER'} 1 s`,
    );
  };

  const blank = async () => {
    await page.goto('about:blank');
  };
  // The anchor: the same page load for a list of 20 owners, so the inventory's own cost is the
  // difference (and the ratio) on the same machine at the same load.
  await timed('anchor: navigate /owners (20 rows)', blank, async () => {
    await page.goto(`${origin}/owners`);
    await page.locator('table tbody tr').first().getByRole('cell').first().waitFor();
  });
  await timed('navigate /certificates', blank, async () => {
    await page.goto(`${origin}/certificates`);
    await interactive();
  });
  // The saved filter: made in the page (status Active, sorted by expiry), then its URL reused.
  await page.goto(`${origin}/certificates`);
  await interactive();
  await page.getByLabel('Status').selectOption('Active');
  await page.getByRole('button', { name: 'Expires' }).click();
  await page.waitForURL(/sort=expires_at/);
  await interactive();
  const saved = page.url();
  console.log(`  saved filter: ${decodeURIComponent(saved.slice(origin.length))}`);
  await timed('navigate saved filter (Active, by expiry)', blank, async () => {
    await page.goto(saved);
    await interactive();
  });
  let n = 0;
  await timed(
    'search (typed, Apply)',
    async () => {
      await page.goto(`${origin}/certificates`);
      await interactive();
      await page.getByLabel('Search').fill(`host-${4242 + n++}.`);
    },
    async () => {
      const before = await firstName();
      await page.getByRole('button', { name: 'Apply' }).click();
      await interactive(before ?? undefined);
    },
  );
  let pageNo = 1;
  await page.goto(`${origin}/certificates`);
  await interactive();
  await timed(
    'next page (pager)',
    async () => {},
    async () => {
      const before = await firstName();
      await page.getByRole('button', { name: 'Next' }).click();
      await page.waitForURL(new RegExp(`page=${++pageNo}`));
      await interactive(before ?? undefined);
    },
  );
  console.log(
    `  load average: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
} finally {
  await closeAll();
  await cleanup();
}
