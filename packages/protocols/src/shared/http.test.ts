import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { segmentsAfter } from './http.js';

/** The RegExp reading segmentsAfter had before it went character by character: the reference. */
function reference(pathname: string, prefix: string): string[] | null {
  if (pathname !== prefix && !pathname.startsWith(`${prefix}/`)) return null;
  const rest = pathname.slice(prefix.length).replace(/^\/+/, '');
  return rest === '' ? [] : rest.split('/');
}

describe('segmentsAfter', () => {
  it('splits what follows the prefix, leading slashes skipped, and refuses other paths', () => {
    const prefix = '/.well-known/pki/ocsp';
    expect(segmentsAfter(prefix, prefix)).toEqual([]);
    expect(segmentsAfter(`${prefix}/`, prefix)).toEqual([]);
    expect(segmentsAfter(`${prefix}//iss_1/serial/01`, prefix)).toEqual(['iss_1', 'serial', '01']);
    expect(segmentsAfter(`${prefix}/iss_1/`, prefix)).toEqual(['iss_1', '']);
    expect(segmentsAfter(`${prefix}x/iss_1`, prefix)).toBeNull();
    expect(segmentsAfter('/.well-known/pki', prefix)).toBeNull();
  });

  it('agrees with the RegExp reading on any path (seeded)', () => {
    const part = fc.constantFrom('/', '//', 'a', 'iss_1', '.', '%2f', '/x/');
    const path = fc.array(part, { maxLength: 8 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(fc.constantFrom('/p', '/p/q', ''), path, (prefix, tail) => {
        const pathname = prefix + tail;
        expect(segmentsAfter(pathname, prefix)).toEqual(reference(pathname, prefix));
      }),
      { seed: 20261128, numRuns: 2000 },
    );
  });
});
