import { describe, expect, it } from 'vitest';
import { bitString, generalizedTime, integer, oid, sequence, setOf, time, tlv, tlvOf } from './der.js';
import {
  assertDerBounds,
  readOid,
  readRoot,
  readString,
  readTime,
  readUnsignedInteger,
} from './der-reader.js';
import { keyUsageValue } from './extensions.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

describe('DER writer', () => {
  it('encodes INTEGERs minimally and keeps them positive', () => {
    expect(hex(integer(0))).toBe('020100');
    expect(hex(integer(127))).toBe('02017f');
    expect(hex(integer(128))).toBe('02020080');
    expect(hex(integer(256n))).toBe('02020100');
    expect(hex(integer(Buffer.from('0000ff', 'hex')))).toBe('020200ff');
    expect(() => integer(-1)).toThrow(
      expect.objectContaining({ name: 'CertwrightError', reason: 'invalid_input' }),
    );
    expect(() => integer(1.5)).toThrow(/not a safe integer/);
  });

  it('encodes OIDs, including large arcs', () => {
    expect(hex(oid('1.2.840.113549.1.1.11'))).toBe('06092a864886f70d01010b');
    expect(hex(oid('2.5.29.37.0'))).toBe('0604551d2500');
    expect(hex(oid('2.999.3'))).toBe('0603883703');
    for (const bad of ['1.40', '3.1', '1', '1..2', '1.2.', 'x.1', `1.${'2'.repeat(300)}`])
      expect(() => oid(bad), bad).toThrow(
        expect.objectContaining({ name: 'CertwrightError', reason: 'invalid_input' }),
      );
  });

  it('encodes long-form lengths', () => {
    expect(hex(tlv(0x04, Buffer.alloc(127))).slice(0, 4)).toBe('047f');
    expect(hex(tlv(0x04, Buffer.alloc(128))).slice(0, 6)).toBe('048180');
    expect(hex(tlv(0x04, Buffer.alloc(256))).slice(0, 8)).toBe('04820100');
    expect(hex(tlvOf(0x30, [Buffer.alloc(70_000)])).slice(0, 10)).toBe('3083011170');
  });

  it('switches from UTCTime to GeneralizedTime in 2050 (RFC 5280)', () => {
    expect(Buffer.from(time(new Date('2049-12-31T23:59:59Z'))).toString('latin1', 2)).toBe('491231235959Z');
    expect(Buffer.from(time(new Date('2050-01-01T00:00:00Z'))).toString('latin1', 2)).toBe('20500101000000Z');
    expect(Buffer.from(generalizedTime(new Date('2024-02-29T12:00:00.999Z'))).toString('latin1', 2)).toBe(
      '20240229120000Z',
    );
  });

  it('sorts SET OF elements and drops trailing zero bits of named bit strings', () => {
    expect(hex(setOf(Buffer.from('0201ff', 'hex'), Buffer.from('020101', 'hex')))).toBe(
      '3106020101' + '0201ff',
    );
    expect(hex(keyUsageValue(['digitalSignature']))).toBe('03020780');
    expect(hex(keyUsageValue(['keyCertSign', 'cRLSign']))).toBe('03020106');
    expect(hex(keyUsageValue(['digitalSignature', 'decipherOnly']))).toBe('0303078080');
    expect(hex(bitString(Buffer.from([0xaa])))).toBe('030200aa');
  });

  it('round-trips through the reader', () => {
    const d = sequence(
      oid('1.3.6.1.5.5.7.48.1.2'),
      integer(Buffer.from('00deadbeef', 'hex')),
      generalizedTime(new Date('2030-05-06T07:08:09Z')),
    );
    const root = readRoot(d);
    const kids = [
      ...(function* () {
        let off = root.contentStart;
        while (off < root.end) {
          const n = readRoot(d.subarray(off, off + 2 + d[off + 1]!));
          yield { ...n, start: n.start + off, contentStart: n.contentStart + off, end: n.end + off };
          off += n.end;
        }
      })(),
    ];
    expect(readOid(d, kids[0])).toBe('1.3.6.1.5.5.7.48.1.2');
    expect(hex(readUnsignedInteger(d, kids[1], 'x'))).toBe('deadbeef');
    expect(readTime(d, kids[2], 't').toISOString()).toBe('2030-05-06T07:08:09.000Z');
  });
});

describe('DER bounds', () => {
  const nest = (n: number): Buffer => {
    let b: Buffer = Buffer.alloc(0);
    for (let i = 0; i < n; i++) b = tlv(0x30, b);
    return b;
  };
  it('accepts input within the limits and refuses depth, node count and size beyond them', () => {
    expect(() =>
      assertDerBounds(nest(10), { maxBytes: 1000, maxNodes: 100, maxDepth: 10 }, 'x'),
    ).not.toThrow();
    expect(() => assertDerBounds(nest(11), { maxBytes: 1000, maxNodes: 100, maxDepth: 10 }, 'x')).toThrow(
      /nested deeper/,
    );
    const wide = tlvOf(
      0x30,
      Array.from({ length: 101 }, () => Buffer.from([5, 0])),
    );
    expect(() => assertDerBounds(wide, { maxBytes: 1000, maxNodes: 100, maxDepth: 10 }, 'x')).toThrow(
      /more than 100/,
    );
    expect(() =>
      assertDerBounds(Buffer.alloc(1001), { maxBytes: 1000, maxNodes: 100, maxDepth: 10 }, 'x'),
    ).toThrow(/limit/);
  });
  it('refuses non-minimal and oversized length fields', () => {
    const b = { maxBytes: 1000, maxNodes: 100, maxDepth: 10 };
    expect(() => assertDerBounds(Buffer.from('30810100', 'hex'), b, 'x')).toThrow(/non-minimal/);
    expect(() => assertDerBounds(Buffer.from('3085ffffffffff', 'hex'), b, 'x')).toThrow(/too large/);
    expect(() => assertDerBounds(Buffer.from('3084ffffffff', 'hex'), b, 'x')).toThrow(/truncated/);
  });
});

describe('OID reading', () => {
  it('reads arcs of any size and every first-arc form back as written', () => {
    for (const dotted of [
      '0.9.2342.19200300.100.1.25',
      '1.39.1',
      '2.5.29.37.0',
      '2.999.3',
      '2.100000000000000000000.1',
      `1.2.${2 ** 53 + 1}`,
      '1.3.6.1.4.1.99999.18446744073709551617',
    ]) {
      const d = oid(dotted);
      expect(readOid(d, readRoot(d))).toBe(dotted);
    }
  });
});

describe('DER reader failures are typed', () => {
  const typed = (fn: () => unknown) =>
    expect(fn).toThrow(expect.objectContaining({ name: 'CertwrightError', reason: 'malformed' }));
  it('refuses a UniversalString holding a value that is no Unicode scalar (6 bytes found by fuzzing)', () => {
    for (const h of ['1c04407c5a8d', '1c04ffffffff', '1c040000d800', '1c0400110000']) {
      const d = Buffer.from(h, 'hex');
      typed(() => readString(d, readRoot(d), 'value'));
    }
    const ok = Buffer.from('1c080001f6000000004b', 'hex').subarray(0, 10);
    expect(readString(ok, readRoot(ok), 'value')).toBe('\u{1f600}K');
  });
  it('refuses invalid UTF-8 instead of substituting U+FFFD', () => {
    const d = Buffer.from('0c03c328a1', 'hex');
    typed(() => readString(d, readRoot(d), 'value'));
  });
  it('refuses times that Date.UTC would roll over', () => {
    for (const t of ['240230120000Z', '241301000000Z', '240101240000Z', '240101006000Z', '240101000060Z']) {
      const d = tlv(0x17, Buffer.from(t, 'latin1'));
      typed(() => readTime(d, readRoot(d), 'time'));
    }
  });
});
