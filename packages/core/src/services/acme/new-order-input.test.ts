import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseInput } from '../input.js';
import { acmeNewOrderSchema, parseNewOrder } from './new-order-input.js';

/** The outcome of a parse: the value, or the error's reason and fields. */
function outcome(parse: () => unknown): unknown {
  try {
    return { value: parse() };
  } catch (error) {
    const { reason, fields } = error as { reason?: string; fields?: unknown };
    return { reason, fields };
  }
}

const viaSchema = (input: unknown) => outcome(() => parseInput(acmeNewOrderSchema, input));
const viaParse = (input: unknown) => outcome(() => parseNewOrder(input));

const long = (n: number) => 'a'.repeat(n);

describe('newOrder payload', () => {
  it('answers every edge of the schema as the schema does', () => {
    const cases: unknown[] = [
      { identifiers: [{ type: 'dns', value: 'a.example.com' }] },
      {
        identifiers: [
          { type: 'ip', value: '192.0.2.1' },
          { type: 'dns', value: '*.example.com' },
        ],
      },
      { identifiers: [{ type: 'dns', value: 'a.example' }], profile: 'default', replaces: 'aaa.bbb' },
      { identifiers: [{ type: 'dns', value: long(253) }], profile: long(64) },
      { identifiers: [{ type: 'dns', value: long(254) }] },
      { identifiers: [{ type: 'dns', value: '' }] },
      { identifiers: [{ type: 'email', value: 'a@example.com' }] },
      { identifiers: [{ type: 'dns', value: 'a.example', extra: 1 }] },
      { identifiers: [{ type: 'dns' }] },
      { identifiers: [{ value: 'a.example' }] },
      { identifiers: [{ type: 'dns', value: 7 }] },
      { identifiers: [null] },
      { identifiers: [['dns', 'a.example']] },
      { identifiers: [] },
      { identifiers: Array.from({ length: 100 }, (_, i) => ({ type: 'dns', value: `n${i}.example` })) },
      { identifiers: Array.from({ length: 101 }, (_, i) => ({ type: 'dns', value: `n${i}.example` })) },
      { identifiers: { type: 'dns', value: 'a.example' } },
      { identifiers: [{ type: 'dns', value: 'a.example' }], profile: '' },
      { identifiers: [{ type: 'dns', value: 'a.example' }], profile: long(65) },
      { identifiers: [{ type: 'dns', value: 'a.example' }], profile: 3 },
      { identifiers: [{ type: 'dns', value: 'a.example' }], replaces: '' },
      { identifiers: [{ type: 'dns', value: 'a.example' }], replaces: long(4096) },
      { identifiers: [{ type: 'dns', value: 'a.example' }], profile: undefined },
      { identifiers: [{ type: 'dns', value: 'a.example' }], notBefore: '2026-01-01T00:00:00Z' },
      { identifiers: [{ type: 'dns', value: 'a.example' }], notAfter: 'tomorrow' },
      { identifiers: [{ type: 'dns', value: 'a.example' }], unknown: true },
      {},
      null,
      [],
      'identifiers',
    ];
    for (const input of cases) expect(viaParse(input), JSON.stringify(input)).toEqual(viaSchema(input));
  });

  it('matches the schema on generated payloads', () => {
    const text = fc.oneof(
      fc.string({ maxLength: 4 }),
      fc.constantFrom('', long(64), long(65), long(253), long(254)),
    );
    const identifier = fc.oneof(
      fc.record({ type: fc.constantFrom('dns', 'ip', 'email'), value: text }),
      fc.record({
        type: fc.constantFrom('dns', 'ip'),
        value: fc.oneof(text, fc.integer()),
        other: fc.string(),
      }),
      fc.anything(),
    );
    const payload = fc.record(
      {
        identifiers: fc.oneof(fc.array(identifier, { maxLength: 3 }), fc.anything()),
        profile: fc.oneof(text, fc.integer()),
        replaces: text,
        notBefore: fc.constantFrom('2026-01-01T00:00:00Z', 'soon'),
        other: fc.anything(),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(payload, (input) => {
        expect(viaParse(input)).toEqual(viaSchema(input));
      }),
      { seed: 8555, numRuns: 2000 },
    );
  });
});
