import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plainPathname, plainTargetPathname } from '../src/request-listener.js';

/**
 * The listener takes an OCSP request's path as it came when it provably is what URL parsing
 * would give: a path it got wrong would route a request the Web path routes elsewhere.
 */
const ORIGIN = 'https://ocsp.example.test';
const parsed = (target: string) => new URL(target, ORIGIN).pathname;

/**
 * What the seeded targets are made of: what URL parsing rewrites (dot segments in any spelling,
 * backslashes, a leading `//`, characters it percent-encodes) next to what it keeps.
 */
const TARGET_PIECES = [
  '/',
  '.',
  '..',
  '%2e',
  '%2E',
  '%2F',
  '%',
  'a',
  'Z',
  '9',
  '-',
  '_',
  '~',
  '+',
  '=',
  '?',
  '&',
  '#',
  "'",
  '"',
  '<',
  '\\',
  ' ',
  '//',
  ':',
  '@',
  '!',
  '$',
  '\t',
  'é',
];

describe('the request target taken as the pathname without parsing', () => {
  it('takes the OCSP paths relying parties send (POST and URL-encoded base64 GET)', () => {
    for (const target of [
      '/.well-known/pki/ocsp/iss-2c620cc1-70ab-4de9-ba18-5d72d95d3563',
      '/.well-known/pki/ocsp/iss-1/MEIwQDA%2BMDwwOjAJBgUrDgMCGgUABBQ%3D',
      '/.well-known/pki/ocsp/iss-1/MEIwQDA+MDwwOjAJBgUrDgMCGgUABBQ=',
    ]) {
      expect(plainPathname(target)).toBe(target);
      expect(parsed(target)).toBe(target);
    }
  });

  it('leaves to URL parsing what it would rewrite: dot segments, %2e, a leading //, a query', () => {
    for (const target of [
      '/a/../b',
      '/a/./b',
      '/a/%2E%2e/b',
      '/a/.%2e',
      '//evil.test/x',
      '/a?b',
      '/a b',
      '/a\\b',
    ]) {
      expect(plainPathname(target)).toBeUndefined();
    }
  });

  it('agrees with URL parsing on every target it takes (seeded)', () => {
    const piece = fc.constantFrom(...TARGET_PIECES);
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const target = `/${pieces.join('')}`;
        const taken = plainPathname(target);
        if (taken !== undefined) expect(taken).toBe(parsed(target));
      }),
      { seed: 0x0c5b, numRuns: 5000 },
    );
  });
});

describe('a target with a query taken without parsing (SCEP: `?operation=…`)', () => {
  it("takes SCEP's targets: the pathname is the part before '?', origin + target the parsed href", () => {
    for (const target of [
      '/scep?operation=GetCACaps',
      '/scep/?operation=GetCACert&message=CA',
      '/scep/iot?operation=PKIOperation&message=MIIB+a/b==',
      '/scep?operation=PKIOperation&message=MIIB%2Ba%2Fb%3D%3D',
      '/scep?',
    ]) {
      const url = new URL(target, ORIGIN);
      expect(plainTargetPathname(target)).toBe(url.pathname);
      expect(ORIGIN + target).toBe(url.href);
    }
  });

  it('leaves to URL parsing a query it would rewrite, and a path plainPathname leaves', () => {
    for (const target of [
      "/scep?x='",
      '/scep?a b',
      '/scep?a"b',
      '/scep?a<b>',
      '/scep?a#b',
      '/a/../b?x',
      '//evil.test/x?y',
    ]) {
      expect(plainTargetPathname(target)).toBeUndefined();
    }
  });

  it('agrees with URL parsing on every target it takes, pathname and href (seeded)', () => {
    const piece = fc.constantFrom(...TARGET_PIECES);
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 14 }), (pieces) => {
        const target = `/${pieces.join('')}`;
        const taken = plainTargetPathname(target);
        if (taken === undefined) return;
        const url = new URL(target, ORIGIN);
        expect(taken).toBe(url.pathname);
        expect(ORIGIN + target).toBe(url.href);
      }),
      { seed: 0x5ce9, numRuns: 5000 },
    );
  });
});
