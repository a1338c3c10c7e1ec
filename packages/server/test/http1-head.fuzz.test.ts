import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readRequestHead } from '../src/http1-head.js';

/**
 * The direct connections' head reader takes bytes straight from clients: whatever they send,
 * it gives one of its four typed outcomes and never throws, never reads past its limit, and
 * takes only requests whose every field it checked.
 */

const LIMIT = 512;
const KINDS = ['incomplete', 'too_large', 'other', 'request'];

const line = fc.oneof(
  fc.constantFrom(
    'Host: ocsp.example.test',
    'Content-Length: 5',
    'Content-Length: 12',
    'content-length: 0',
    'Transfer-Encoding: chunked',
    'Expect: 100-continue',
    'Connection: close',
    'Connection: keep-alive, Upgrade',
    'Content-Type: application/ocsp-request',
    ' folded',
    'X-Odd : value',
    'Host:',
    ':empty',
  ),
  fc.string({ maxLength: 40 }),
);
const requestLine = fc.oneof(
  fc.constantFrom(
    'POST /.well-known/pki/ocsp/iss-1 HTTP/1.1',
    'GET /.well-known/pki/ocsp/iss-1/MEMwQTA%2FMD0wOzAJBgUrDgMCGgUABBQ HTTP/1.1',
    'GET / HTTP/1.0',
    'GET http://example.test/ HTTP/1.1',
    'GET  / HTTP/1.1',
  ),
  fc.string({ maxLength: 60 }),
);
/** A head-like text: a request line, header lines, sometimes the blank line, sometimes a body. */
const headLike = fc
  .tuple(
    requestLine,
    fc.array(line, { maxLength: 8 }),
    fc.constantFrom('\r\n\r\n', '\r\n', '\n\n', ''),
    fc.uint8Array({ maxLength: 40 }),
  )
  .map(([first, lines, end, body]) =>
    Buffer.concat([Buffer.from([first, ...lines].join('\r\n') + end, 'latin1'), body]),
  );
const bytes = fc.oneof(
  headLike,
  fc.uint8Array({ maxLength: 700 }).map((b) => Buffer.from(b)),
);

describe('the HTTP/1.1 head reader of the direct connections', () => {
  it('answers every input with a typed outcome, within its limit, and takes only checked requests', () => {
    fc.assert(
      fc.property(bytes, (input) => {
        const read = readRequestHead(input, LIMIT);
        expect(KINDS).toContain(read.kind);
        if (read.kind !== 'request') return;
        expect(read.headLength).toBeLessThanOrEqual(Math.min(LIMIT, input.length));
        expect(input.subarray(read.headLength - 4, read.headLength).toString('latin1')).toBe('\r\n\r\n');
        // Origin-form, visible ASCII only: no space, control or 8-bit character.
        expect(read.target).toMatch(/^\/[!-~]*$/);
        expect(Number.isSafeInteger(read.contentLength) && read.contentLength >= 0).toBe(true);
        const names = read.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
        expect(names.filter((n) => n === 'host')).toHaveLength(1);
        expect(names).not.toContain('transfer-encoding');
        expect(names).not.toContain('expect');
        expect(names.filter((n) => n === 'content-length').length).toBeLessThanOrEqual(1);
      }),
      { seed: 6960, numRuns: 2000 },
    );
  });

  it('reads a plain request head: method, target, headers, body length, Connection: close', () => {
    const head = Buffer.from(
      'POST /.well-known/pki/ocsp/iss-1 HTTP/1.1\r\nHost: a.test:8443\r\nContent-Length: 3\r\n' +
        'X-Two: 1\r\nx-two: 2\r\nConnection: close\r\n\r\nabc',
    );
    expect(readRequestHead(head, LIMIT)).toEqual({
      kind: 'request',
      method: 'POST',
      target: '/.well-known/pki/ocsp/iss-1',
      rawHeaders: [
        'Host',
        'a.test:8443',
        'Content-Length',
        '3',
        'X-Two',
        '1',
        'x-two',
        '2',
        'Connection',
        'close',
      ],
      host: 'a.test:8443',
      headLength: head.length - 3,
      contentLength: 3,
      close: true,
    });
  });

  it('waits for the rest of a head within the limit and refuses one that outgrows it', () => {
    const start = Buffer.from('GET /x HTTP/1.1\r\nHost: a.test\r\n');
    expect(readRequestHead(start, LIMIT).kind).toBe('incomplete');
    const long = Buffer.concat([start, Buffer.alloc(LIMIT, 'a')]);
    expect(readRequestHead(long, LIMIT).kind).toBe('too_large');
    const endsLate = Buffer.concat([start, Buffer.from(`X: ${'b'.repeat(LIMIT)}\r\n\r\n`)]);
    expect(readRequestHead(endsLate, LIMIT).kind).toBe('too_large');
  });
});
