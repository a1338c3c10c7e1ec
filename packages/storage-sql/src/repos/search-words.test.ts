import { describe, expect, it } from 'vitest';
import { boundaryKeys, indexedPart, narrowsIndex } from './search-words.js';

const common =
  (...words: string[]) =>
  (w: string) =>
    words.includes(w);

describe('indexedPart', () => {
  it('leaves the common words at either end out, keeping the separator that marks the word boundary', () => {
    expect(indexedPart('host-4242', common('host'))).toBe('-4242');
    expect(indexedPart('api.example.com', common('example', 'com'))).toBe('api.');
    expect(indexedPart('www.shop-7.example.com', common('www', 'example', 'com'))).toBe('.shop-7.');
  });

  it('keeps common words between uncommon ones: the part must stay one substring of the pattern', () => {
    expect(indexedPart('a1b.host.c2d.com', common('host', 'com'))).toBe('a1b.host.c2d.');
  });

  it('asks for the whole pattern when no word is common, or every word is', () => {
    expect(indexedPart('host-4242', common())).toBeUndefined();
    expect(indexedPart('bench.test', common('bench', 'test'))).toBeUndefined();
    expect(indexedPart('-77777.', common())).toBeUndefined();
  });

  it('never hands the index a part without trigrams, which would select every row', () => {
    // "a-" pads to "a " (two characters): no trigram.
    expect(indexedPart('a-host', common('host'))).toBeUndefined();
    // "-1" pads to "  1": one trigram (words starting with 1).
    expect(indexedPart('host-1', common('host'))).toBe('-1');
  });

  it('leaves non-ASCII patterns whole, since which characters pg_trgm treats as letters depends on the locale', () => {
    expect(indexedPart('host-ünï', common('host'))).toBeUndefined();
  });

  it('returns a substring of the pattern, so every row matching the pattern also matches the part', () => {
    expect(indexedPart('x.y.z', common('x'))).toBe('.y.z');
    expect(indexedPart('x.y.z', common('z'))).toBe('x.y.');
    expect(indexedPart('%_.abc.def', common('def'))).toBe('.abc.');
  });
});

describe('boundaryKeys', () => {
  it('marks where a word is known to start or end, and leaves out words without a trigram', () => {
    expect(boundaryKeys('-1')).toEqual(['^1']);
    expect(boundaryKeys('host-1')).toEqual(['host$', '^1']);
    expect(boundaryKeys('.shop-7.')).toEqual(['^shop$', '^7$']);
    expect(boundaryKeys('zq')).toEqual([]);
    expect(boundaryKeys('a-')).toEqual([]);
  });
});

describe('narrowsIndex', () => {
  it('holds when a word yielding a trigram is not common where it starts or ends', () => {
    expect(narrowsIndex('-1', common('host'))).toBe(true);
    // "1" is in half the rows, but numbers starting with 1 are not.
    expect(narrowsIndex('host-1', common('host$', '1'))).toBe(true);
    expect(narrowsIndex('host-4242', common('host$'))).toBe(true);
    expect(narrowsIndex('abc', common())).toBe(true);
  });

  it('fails for common words only, whose trigrams are in nearly every row', () => {
    expect(narrowsIndex('host-1', common('host$', '^1'))).toBe(false);
    expect(narrowsIndex('bench.test', common('bench$', '^test'))).toBe(false);
  });

  it('fails without a trigram, which would read the whole index', () => {
    // "zq" has no known boundary: no padding, two characters, no trigram.
    expect(narrowsIndex('zq', common())).toBe(false);
    // "a" after a separator starts a word: padded "  a", one trigram; alone it has none.
    expect(narrowsIndex('host.a', common('host$'))).toBe(true);
    expect(narrowsIndex('a', common())).toBe(false);
    expect(narrowsIndex('', common())).toBe(false);
  });

  it('fails for non-ASCII parts, whose letters pg_trgm reads by locale', () => {
    expect(narrowsIndex('ünïcode', common())).toBe(false);
  });
});
