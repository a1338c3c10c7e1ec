import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCertwrightError } from '../../src/errors.js';
import { parseTemplate, parseUrlTemplate, type TemplateLimits } from '../../src/notify/template/index.js';
import { DATA } from './fixtures.js';

/**
 * Random template text never makes the engine throw anything but its typed error, and never
 * makes it exceed its limits. Seeded, so a failure replays.
 */
const LIMITS: TemplateLimits = {
  maxTemplateBytes: 2048,
  maxDepth: 12,
  maxSteps: 5_000,
  maxOutputBytes: 4096,
};

/** Fragments that make random text look like templates often enough to reach the executor. */
const FRAGMENTS = [
  '{{',
  '}}',
  '{{- ',
  ' -}}',
  '{{/*',
  '*/}}',
  ' ',
  '\n',
  '.',
  '.Level',
  '.Value',
  '.List',
  '.Map',
  '.Items',
  '.Nothing',
  '.Missing',
  '$',
  '$x',
  '$i',
  ':=',
  '=',
  ',',
  '|',
  '(',
  ')',
  'if',
  'else',
  'end',
  'range',
  'with',
  'break',
  'continue',
  'nil',
  'true',
  '0',
  '1',
  '-1',
  '1.5',
  '1e400',
  '0x1F',
  "'a'",
  '"s"',
  '"%v"',
  '"%5.1f"',
  '"%*d"',
  '"%[1]d"',
  '`raw`',
  '"\\u00e9"',
  'printf',
  'print',
  'println',
  'eq',
  'lt',
  'and',
  'or',
  'not',
  'len',
  'index',
  'json',
  'urlquery',
  'urlpath',
  'title',
  'upper',
  'https://x.example.test/',
  '?q=',
];

const templateText = fc.oneof(
  fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 40 }).map((parts) => parts.join('')),
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 100 }),
);

/** Well-formed templates of random shape: they parse, so the executor meets every combination. */
const operand = fc.constantFrom(
  '.Level',
  '.Value',
  '.List',
  '.Map',
  '.Items',
  '.Nothing',
  '$',
  '.',
  '$e',
  '1',
  '-2',
  '2.5',
  '"s"',
  'true',
  'nil',
  '(len .List)',
  '(index .List 1)',
  '(print .Value)',
);
const call = fc.constantFrom(
  'print',
  'printf "%v %d %q"',
  'len',
  'index',
  'eq',
  'lt',
  'and',
  'or',
  'not',
  'json',
  'urlquery',
  'upper',
  'title',
);
const command = fc
  .tuple(call, fc.array(operand, { maxLength: 3 }))
  .map(([f, args]) => [f, ...args].join(' '));
const pipeline = fc.oneof(
  operand,
  fc.array(command, { minLength: 1, maxLength: 3 }).map((c) => c.join(' | ')),
);
const { list: wellFormed } = fc.letrec<{ node: string; list: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('x', ' ', '\n'),
    pipeline.map((p) => `{{${p}}}`),
    fc.tuple(pipeline, tie('list'), tie('list')).map(([p, a, b]) => `{{if ${p}}}${a}{{else}}${b}{{end}}`),
    fc.tuple(pipeline, tie('list')).map(([p, a]) => `{{with ${p}}}${a}{{end}}`),
    fc
      .tuple(pipeline, tie('list'))
      .map(([p, a]) => `{{range $i, $e := ${p}}}${a}{{if $i}}{{break}}{{end}}{{end}}`),
  ),
  list: fc.array(tie('node'), { maxLength: 4 }).map((nodes) => nodes.join('')),
}));

function assertContained(run: () => string): void {
  try {
    const out = run();
    expect(Buffer.byteLength(out, 'utf8')).toBeLessThanOrEqual(LIMITS.maxOutputBytes);
  } catch (error) {
    if (!isCertwrightError(error) || error.reason !== 'invalid_input') throw error;
  }
}

describe('template engine fuzz', () => {
  it('throws only typed invalid_input errors and stays within its limits', () => {
    fc.assert(
      fc.property(templateText, (text) => {
        assertContained(() => parseTemplate(text, { limits: LIMITS }).render(DATA));
        assertContained(() => parseTemplate(text, { limits: LIMITS, missingKey: 'no-value' }).render(DATA));
      }),
      { seed: 20240501, numRuns: 3000 },
    );
  });

  it('well-formed templates of any shape render or fail typed', () => {
    fc.assert(
      fc.property(wellFormed, (text) => {
        assertContained(() => parseTemplate(`{{$e := 0}}${text}`, { limits: LIMITS }).render(DATA));
      }),
      { seed: 20240504, numRuns: 1500 },
    );
  });

  it('URL templates too', () => {
    fc.assert(
      fc.property(templateText, (text) => {
        assertContained(() =>
          parseUrlTemplate(`https://x.example.test/${text}`, { limits: LIMITS }).render(DATA),
        );
      }),
      { seed: 20240502, numRuns: 1500 },
    );
  });

  it('any data: values of every JSON shape render or fail typed', () => {
    const template = parseTemplate(
      '{{range $k, $v := .}}{{$k}}={{$v}} {{printf "%v %d %s %q %.1f %x" $v $v $v $v $v $v}} {{json $v}} {{len (print $v)}} {{if $v}}t{{end}}{{end}}',
      { limits: LIMITS },
    );
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 })), (data) => {
        assertContained(() => template.render(data));
      }),
      { seed: 20240503, numRuns: 500 },
    );
  });
});
