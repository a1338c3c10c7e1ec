/**
 * The command line's own little languages: durations and relative times, `-o jsonpath=…` and
 * `-o template=…`, and tables that name referenced records.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/exit-codes.js';
import { parseFormat, render } from '../src/output.js';
import { compileTemplate } from '../src/template.js';
import { durationMs, parseAmount, parseInstant, validityDays } from '../src/times.js';

const NOW = Date.parse('2026-12-02T12:00:00Z');
const DAY = 86_400_000;

describe('durations wherever a time is accepted', () => {
  it('reads 30d, 720h, 1h30m, 2w and 90s', () => {
    expect(durationMs('30d')).toBe(30 * DAY);
    expect(durationMs('720h')).toBe(30 * DAY);
    expect(durationMs('1h30m')).toBe(90 * 60_000);
    expect(durationMs('2w')).toBe(14 * DAY);
    expect(durationMs('90s')).toBe(90_000);
    expect(durationMs('30 days')).toBeUndefined();
    expect(durationMs('1.5h')).toBeUndefined();
  });

  it('turns a time flag into RFC 3339: ahead for expiry, ago otherwise, signs and now as written', () => {
    expect(parseInstant('--expires-before', '30d', 'future', NOW)).toBe('2027-01-01T12:00:00.000Z');
    expect(parseInstant('--from', '7d', 'past', NOW)).toBe('2026-11-25T12:00:00.000Z');
    expect(parseInstant('--from', 'now-12h', 'past', NOW)).toBe('2026-12-02T00:00:00.000Z');
    expect(parseInstant('--to', '+1h', 'past', NOW)).toBe('2026-12-02T13:00:00.000Z');
    expect(parseInstant('--to', 'now', 'past', NOW)).toBe('2026-12-02T12:00:00.000Z');
    expect(parseInstant('--from', '2026-11-01T00:00:00Z', 'past', NOW)).toBe('2026-11-01T00:00:00Z');
    expect(() => parseInstant('--from', 'yesterday', 'past', NOW)).toThrow(
      /--from: "yesterday" is neither an RFC 3339 time .* nor a duration/,
    );
  });

  it('converts durations for seconds and days fields, refusing what is not whole', () => {
    expect(parseAmount('--interval-seconds', '5m', 'seconds')).toBe(300);
    expect(parseAmount('--interval-seconds', '300', 'seconds')).toBe(300);
    expect(parseAmount('--renewal-window-days', '720h', 'days')).toBe(30);
    expect(() => parseAmount('--renewal-window-days', '36h', 'days')).toThrow(/not a whole number of days/);
    expect(validityDays('--not-after', '720h', NOW)).toBe(30);
    expect(validityDays('--not-after', '2026-12-12T13:00:00Z', NOW)).toBe(11);
    expect(() => validityDays('--not-after', '2026-01-01T00:00:00Z', NOW)).toThrow(/in the past/);
  });

  it('accepts any text only as a value or a usage error (seeded)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), fc.constantFrom('future', 'past'), (text, direction) => {
        for (const attempt of [
          () => parseInstant('--x', text, direction as 'future' | 'past', NOW),
          () => parseAmount('--x', text, 'seconds'),
          () => validityDays('--x', text, NOW),
        ]) {
          try {
            attempt();
          } catch (error) {
            expect(error).toBeInstanceOf(UsageError);
          }
        }
      }),
      { seed: 35, numRuns: 500 },
    );
  });
});

const page = {
  data: [
    { id: 'mc-1', name: 'web', status: 'Active', owner_id: 'own-1', metadata: { env: 'prod' } },
    { id: 'mc-2', name: 'api', status: 'Expiring', owner_id: 'own-2', metadata: { env: 'test' } },
  ],
  total: 2,
  page: 1,
  per_page: 50,
};

describe('-o jsonpath and -o template', () => {
  it('prints paths, ranges and literals as kubectl and Go templates do', () => {
    expect(render(page, parseFormat('jsonpath={.data[*].id}'))).toBe('mc-1 mc-2');
    expect(
      render(page, parseFormat('jsonpath={range .data[*]}{.id}{"\\t"}{.metadata.env}{"\\n"}{end}')),
    ).toBe('mc-1\tprod\nmc-2\ttest\n');
    expect(render(page, parseFormat("jsonpath={.data[1]['name']} of {.total}"))).toBe('api of 2');
    expect(render(page, parseFormat('template={{range .data}}{{.name}}={{.status}}{{"\\n"}}{{end}}'))).toBe(
      'web=Active\napi=Expiring\n',
    );
    expect(render(page.data[0], parseFormat('template={{.metadata}}'))).toBe('{"env":"prod"}');
  });

  it('refuses a malformed expression with a usage error naming it', () => {
    expect(() => parseFormat('jsonpath={.data[*].id')).toThrow(
      /-o jsonpath: \{ at character 1 is never closed/,
    );
    expect(() => parseFormat('jsonpath={range .data[*]}{.id}')).toThrow(/\{range\} without \{end\}/);
    expect(() => parseFormat('template={{.data[}}')).toThrow(/cannot read the path/);
    expect(() => parseFormat('xml')).toThrow(
      /--output must be one of table, json, yaml, jsonpath=…, template=…/,
    );
  });

  it('compiles any text or refuses it with a usage error, and renders any JSON (seeded)', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 80 }),
        fc.jsonValue(),
        fc.constantFrom('jsonpath', 'template'),
        (source, value, syntax) => {
          let compiled: ((v: unknown) => string) | undefined;
          try {
            compiled = compileTemplate(source, syntax as 'jsonpath' | 'template');
          } catch (error) {
            expect(error).toBeInstanceOf(UsageError);
          }
          if (compiled) expect(typeof compiled(value)).toBe('string');
        },
      ),
      { seed: 35, numRuns: 500 },
    );
  });
});

describe('tables', () => {
  const names = new Map([['owner_id', new Map([['own-1', 'Web team']])]]);

  it('show the names of referenced records, titled for what they name, and the ids that have none', () => {
    const text = render(page, { kind: 'table' }, { names });
    const [header, first, second] = text.split('\n');
    expect(header).toMatch(/^ID\s+NAME\s+STATUS\s+OWNER$/);
    expect(first).toMatch(/^mc-1\s+web\s+Active\s+Web team$/);
    expect(second).toMatch(/^mc-2\s+api\s+Expiring\s+own-2$/);
    expect(render(page.data[0], { kind: 'table' }, { names })).toContain('owner_id  Web team (own-1)');
  });

  it('show the --columns chosen, in order, reading references and nested fields, and refuse an unknown one', () => {
    const text = render(page, { kind: 'table' }, { names, columns: ['status', 'owner', 'metadata.env'] });
    expect(text.split('\n').slice(0, 3)).toEqual([
      'STATUS    OWNER     METADATA.ENV',
      'Active    Web team  prod',
      'Expiring  own-2     test',
    ]);
    expect(() => render(page, { kind: 'table' }, { columns: ['nmae'] })).toThrow(
      /--columns: no field "nmae" in this answer \(fields: id, name, status, owner_id, metadata\)/,
    );
  });
});
