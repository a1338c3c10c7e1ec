import { describe, expect, it } from 'vitest';
import { indexedPart } from './search-words.js';

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
