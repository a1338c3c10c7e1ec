import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { requestIdOf } from './request-id.js';

const head = (id?: string) => ({
  method: 'GET',
  url: 'https://127.0.0.1/x',
  headers: new Headers(id === undefined ? {} : { 'x-request-id': id }),
});
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('requestIdOf', () => {
  it("echoes a caller's printable id of up to 128 characters", () => {
    expect(requestIdOf(head('trace-1.a:b_C'))).toBe('trace-1.a:b_C');
    expect(requestIdOf(head('x'.repeat(128)))).toBe('x'.repeat(128));
  });

  it('replaces a missing, empty, too long or unsafe id with a fresh UUID', () => {
    for (const id of [undefined, '', 'x'.repeat(129), 'a b', 'a,b', 'a\tb', 'ü']) {
      expect(requestIdOf(head(id))).toMatch(UUID);
    }
    expect(requestIdOf(head())).not.toBe(requestIdOf(head()));
  });

  it('never returns an id a log line or header could be split on, whatever the caller sends', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (id) => {
        let sent: string;
        try {
          sent = new Headers({ 'x-request-id': id }).get('x-request-id')!;
        } catch {
          return; // not a header value at all: no host hands it over
        }
        const answered = requestIdOf(head(sent));
        expect(answered === sent || UUID.test(answered)).toBe(true);
        expect(answered).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
      }),
      { seed: 4242, numRuns: 500 },
    );
  });
});
