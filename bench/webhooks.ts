/**
 * Webhook benchmark: payload renders per second (built-in kinds and a custom template, through
 * the same request preparation a delivery uses) and end-to-end deliveries per second to a local
 * receiver on 127.0.0.1 with the address guard on (resolve once, check, connect to the checked
 * address; one connection per delivery). Run: pnpm bench webhooks. Figures:
 * docs/notifications/webhooks.md.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus } from 'node:os';
import { createWebhookClient, staticResolver } from '../packages/core/src/net/index.js';
import {
  prepareWebhookRequest,
  sampleAlert,
  WebhookSender,
  type WebhookTarget,
} from '../packages/core/src/notify/webhooks/index.js';

const rows: [string, string][] = [];
let sink = 0;
const alert = sampleAlert(new Date('2026-05-01T12:00:00Z'), {
  instance: 'https://cw.example.com',
  node: 'cw-1',
});

function measure(name: string, fn: () => number, ms = 2000): void {
  for (let i = 0; i < 2000; i++) sink += fn();
  let n = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < ms) {
    for (let i = 0; i < 100; i++) sink += fn();
    n += 100;
    elapsed = performance.now() - start;
  }
  const perSec = (n / elapsed) * 1000;
  rows.push([
    name,
    `${Math.round(perSec).toLocaleString('en')} /s  (${((elapsed / n) * 1000).toFixed(1)} µs each)`,
  ]);
  console.error(`${name}: ${perSec.toFixed(0)}/s`);
}

const base = (extra: Partial<WebhookTarget>): WebhookTarget => ({
  url: 'https://hooks.example.com/alert',
  method: 'POST',
  service: 'generic',
  template: '',
  headers: { Authorization: 'Bearer x' },
  options: {},
  ...extra,
});
const CUSTOM =
  '{"text": {{printf "[%s] %s" (.Level | upper) .Message | json}}, "resource": {{.ResourceName | json}}, ' +
  '"days_left": {{.Value}}, "threshold": {{.Threshold}}{{if eq .Level "critical"}}, "page": true{{end}}}';

const prep = (t: WebhookTarget) => () => prepareWebhookRequest(t, alert, 'k').body!.length;
measure('built-in team chat payload (slack), prepare', prep(base({ service: 'slack' })));
measure(
  'built-in bot payload (telegram, HTML escaped), prepare',
  prep(base({ service: 'telegram', url: 'https://api.telegram.test/bot1:A/sendMessage?chat_id=42' })),
);
measure(
  'built-in events API payload (pagerduty), prepare',
  prep(base({ service: 'pagerduty', headers: { routing_key: 'R' } })),
);
measure(`custom template (${CUSTOM.length} B) + JSON check, prepare`, prep(base({ template: CUSTOM })));

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => res.end('ok'));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = (server.address() as AddressInfo).port;
const sender = new WebhookSender({
  client: () =>
    createWebhookClient('127.0.0.1', {
      resolve: staticResolver({ 'receiver.test': '127.0.0.1' }),
      loopback: 'when-listed',
    }),
  now: () => new Date(),
});
const target = base({ url: `http://receiver.test:${port}/hook`, template: CUSTOM });
async function deliveries(concurrency: number, ms = 3000): Promise<void> {
  for (let i = 0; i < 200; i++) await sender.send(target, alert, 'warm');
  let n = 0;
  let failed = 0;
  const start = performance.now();
  const worker = async () => {
    while (performance.now() - start < ms) {
      const r = await sender.send(target, alert, `k${n}`);
      if (r.delivered) n++;
      else failed++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = performance.now() - start;
  const perSec = (n / elapsed) * 1000;
  rows.push([
    `end-to-end deliveries, guard on, ${concurrency} in flight`,
    `${Math.round(perSec).toLocaleString('en')} /s${failed ? ` (${failed} failed)` : ''}`,
  ]);
  console.error(`deliveries x${concurrency}: ${perSec.toFixed(0)}/s`);
}
await deliveries(1);
await deliveries(16);
server.close();

console.log(
  `\nwebhook benchmark — node ${process.version}, ${cpus()[0]?.model ?? 'cpu'} ×${cpus().length}\n`,
);
const width = Math.max(...rows.map(([k]) => k.length));
console.log(`| ${'measure'.padEnd(width)} | result |`);
console.log(`| ${'-'.repeat(width)} | ------ |`);
for (const [k, v] of rows) console.log(`| ${k.padEnd(width)} | ${v} |`);
if (sink === 0) console.log('');
