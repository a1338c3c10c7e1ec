/**
 * Template engine benchmark: renders per second of a parsed template (parse once, render many,
 * as a webhook does), for a custom JSON payload the size of a built-in chat message and for a
 * one-line custom template, next to building the same payload as data with JSON.stringify (the
 * way built-in payloads are made). Run: pnpm bench template. Figures: docs/notifications/templates.md.
 */
import { cpus } from 'node:os';
import { parseTemplate, parseUrlTemplate } from '../packages/core/src/notify/template/index.js';
import { ALERT, CUSTOM_JSON_TEMPLATE, SHORT_TEMPLATE } from '../packages/core/test/template/fixtures.js';

const rows: [string, string][] = [];
let sink = 0;

function measure(name: string, fn: () => string, ms = 2000): void {
  for (let i = 0; i < 2000; i++) sink += fn().length; // warm-up
  let n = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < ms) {
    for (let i = 0; i < 100; i++) sink += fn().length;
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

const custom = parseTemplate(CUSTOM_JSON_TEMPLATE);
const short = parseTemplate(SHORT_TEMPLATE);
const url = parseUrlTemplate(
  'https://api.example.test/bot123:ABC/sendMessage?chat_id=42&text={{.Message | urlquery}}',
);

measure(`custom JSON payload (${CUSTOM_JSON_TEMPLATE.length} B template, 13 variables), render`, () =>
  custom.render(ALERT),
);
measure(`one-line custom template (${SHORT_TEMPLATE.length} B), render`, () => short.render(ALERT));
measure('URL template with urlquery, render', () => url.render(ALERT));
measure('custom JSON payload, parse + render', () => parseTemplate(CUSTOM_JSON_TEMPLATE).render(ALERT));
measure('same payload built as data + JSON.stringify (built-in kinds)', () =>
  JSON.stringify({
    title: `[${ALERT.Level.toUpperCase()}] ${ALERT.ResourceName}`,
    text: ALERT.Message,
    severity: ALERT.Level === 'critical' ? 'high' : ALERT.Level === 'warning' ? 'medium' : 'low',
    value: Number(ALERT.Value.toFixed(1)),
    threshold: ALERT.Threshold,
    resource: { id: ALERT.ResourceID, node: ALERT.Node, type: ALERT.Type },
    started: ALERT.StartTime,
    link: `${ALERT.Instance}/alerts/${encodeURIComponent(ALERT.ID)}`,
  }),
);

console.log(
  `\ntemplate benchmark — node ${process.version}, ${cpus()[0]?.model ?? 'cpu'} ×${cpus().length}\n`,
);
const width = Math.max(...rows.map(([k]) => k.length));
console.log(`| ${'measure'.padEnd(width)} | result |`);
console.log(`| ${'-'.repeat(width)} | ------ |`);
for (const [k, v] of rows) console.log(`| ${k.padEnd(width)} | ${v} |`);
if (sink === 0) console.log('');
