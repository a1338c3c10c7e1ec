import { fail } from '../errors.js';

/**
 * Minimal DER writer (X.690). Every function returns the complete TLV as a Buffer, so
 * structures compose as plain nested calls: `sequence(integer(1n), oid('2.5.4.3'))`.
 *
 * Why not @peculiar/asn1-schema or asn1js: building through their object models costs
 * milliseconds per certificate and grows quadratically for big CRLs, while signing itself
 * costs tens of microseconds. Writing bytes directly keeps CRL, OCSP and leaf issuance close
 * to the raw node:crypto limit. Output of every builder on top of this is verified by
 * openssl in the test suite.
 */

export const Tag = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  ENUMERATED: 0x0a,
  UTF8_STRING: 0x0c,
  PRINTABLE_STRING: 0x13,
  T61_STRING: 0x14,
  IA5_STRING: 0x16,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
  UNIVERSAL_STRING: 0x1c,
  BMP_STRING: 0x1e,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

/** Number of bytes the DER length field takes for a content of `length` bytes. */
export function lengthSize(length: number): number {
  if (length > 0xffffffff) throw fail('too_large', 'a DER value cannot exceed 4 GiB');
  if (length < 0x80) return 1;
  if (length < 0x100) return 2;
  if (length < 0x10000) return 3;
  if (length < 0x1000000) return 4;
  return 5;
}

/** Writes a length field at `offset`; returns the new offset. */
export function writeLength(out: Uint8Array, offset: number, length: number): number {
  if (length < 0x80) {
    out[offset] = length;
    return offset + 1;
  }
  const n = lengthSize(length) - 1;
  out[offset++] = 0x80 | n;
  for (let i = n - 1; i >= 0; i--) out[offset++] = (length >>> (8 * i)) & 0xff;
  return offset;
}

/** A TLV with a one-byte tag around the concatenation of `parts`. */
export const tlv = (tag: number, ...parts: Uint8Array[]): Buffer => tlvOf(tag, parts);

/**
 * Like `tlv`, taking an array: CRLs hold up to millions of entries, more than a spread
 * argument list can carry.
 */
export function tlvOf(tag: number, parts: readonly Uint8Array[]): Buffer {
  let length = 0;
  for (const p of parts) length += p.length;
  const out = Buffer.allocUnsafe(1 + lengthSize(length) + length);
  out[0] = tag;
  let offset = writeLength(out, 1, length);
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

export const sequence = (...items: Uint8Array[]): Buffer => tlv(Tag.SEQUENCE, ...items);

/** SET OF: DER requires the encodings sorted as octet strings (X.690 §11.6). */
export const setOf = (...items: Uint8Array[]): Buffer => setOfList(items);

/** `setOf` for a list of any length (a spread argument list has a size limit). */
export function setOfList(items: readonly Uint8Array[]): Buffer {
  return tlvOf(
    Tag.SET,
    [...items].sort((a, b) => Buffer.compare(a, b)),
  );
}

/** `sequence` for a list of any length. */
export const sequenceOf = (items: readonly Uint8Array[]): Buffer => tlvOf(Tag.SEQUENCE, items);

/** `[n] EXPLICIT` — a constructed context tag around a complete inner TLV. */
export const explicit = (n: number, ...inner: Uint8Array[]): Buffer => tlv(0xa0 | n, ...inner);

/** `[n] IMPLICIT` for a primitive type: the content bytes under a context tag. */
export const implicitPrimitive = (n: number, content: Uint8Array): Buffer => tlv(0x80 | n, content);

/** `[n] IMPLICIT` for a constructed type (SEQUENCE, SET): its content under a context tag. */
export const implicitConstructed = (n: number, ...content: Uint8Array[]): Buffer => tlv(0xa0 | n, ...content);

export const NULL = Buffer.from([Tag.NULL, 0]);

export const boolean = (value: boolean): Buffer => Buffer.from([Tag.BOOLEAN, 1, value ? 0xff : 0]);

/**
 * Content octets of a non-negative INTEGER given as big-endian magnitude bytes: strips
 * redundant leading zeros and adds one when the high bit is set, so the value stays positive.
 */
export function unsignedIntegerContent(magnitude: Uint8Array): Uint8Array {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  const trimmed = magnitude.subarray(start);
  if (trimmed.length === 0) return Buffer.from([0]);
  if ((trimmed[0]! & 0x80) !== 0) {
    const out = Buffer.allocUnsafe(trimmed.length + 1);
    out[0] = 0;
    out.set(trimmed, 1);
    return out;
  }
  return trimmed;
}

function bigintContent(value: bigint): Uint8Array {
  if (value < 0n) throw fail('invalid_input', 'negative INTEGER values are not used by certwright');
  let hex = value.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  return unsignedIntegerContent(Buffer.from(hex, 'hex'));
}

/** INTEGER from a non-negative number/bigint, or from unsigned big-endian magnitude bytes. */
export function integer(value: number | bigint | Uint8Array): Buffer {
  if (value instanceof Uint8Array) return tlv(Tag.INTEGER, unsignedIntegerContent(value));
  return tlv(Tag.INTEGER, bigintContent(toBigInt(value)));
}

export const enumerated = (value: number): Buffer => tlv(Tag.ENUMERATED, bigintContent(toBigInt(value)));

function toBigInt(value: number | bigint): bigint {
  if (typeof value === 'bigint') return value;
  if (!Number.isSafeInteger(value))
    throw fail('invalid_input', `INTEGER value ${value} is not a safe integer`);
  return BigInt(value);
}

const oidCache = new Map<string, Buffer>();
/** The OIDs certwright itself writes number a few dozen; callers' own ones are not kept. */
const OID_CACHE_SIZE = 256;
/** Dotted text of any OID in use is far shorter; longer input is refused before splitting it. */
const MAX_OID_TEXT = 256;

/** OBJECT IDENTIFIER from dotted form; results are cached because the set of OIDs is small. */
export function oid(dotted: string): Buffer {
  const cached = oidCache.get(dotted);
  if (cached) return cached;
  const invalid = () => fail('invalid_input', `invalid OID '${String(dotted).slice(0, 64)}'`);
  if (typeof dotted !== 'string' || dotted.length > MAX_OID_TEXT || !/^\d+(\.\d+)+$/.test(dotted))
    throw invalid();
  const arcs = dotted.split('.').map(BigInt);
  if (arcs[0]! > 2n || (arcs[0]! < 2n && arcs[1]! > 39n)) throw invalid();
  const bytes: number[] = [];
  const values = [arcs[0]! * 40n + arcs[1]!, ...arcs.slice(2)];
  for (const v of values) {
    const chunk: number[] = [Number(v & 0x7fn)];
    let rest = v >> 7n;
    while (rest > 0n) {
      chunk.unshift(Number(rest & 0x7fn) | 0x80);
      rest >>= 7n;
    }
    bytes.push(...chunk);
  }
  const encoded = tlv(Tag.OID, Uint8Array.from(bytes));
  if (oidCache.size < OID_CACHE_SIZE) oidCache.set(dotted, encoded);
  return encoded;
}

export const octetString = (bytes: Uint8Array): Buffer => tlv(Tag.OCTET_STRING, bytes);

/** BIT STRING with `unusedBits` padding bits in the last octet (0 for keys and signatures). */
export function bitString(bytes: Uint8Array, unusedBits = 0): Buffer {
  return tlv(Tag.BIT_STRING, Uint8Array.of(unusedBits), bytes);
}

export const utf8String = (s: string): Buffer => tlv(Tag.UTF8_STRING, Buffer.from(s, 'utf8'));
export const printableString = (s: string): Buffer => tlv(Tag.PRINTABLE_STRING, Buffer.from(s, 'latin1'));
export const ia5String = (s: string): Buffer => tlv(Tag.IA5_STRING, Buffer.from(s, 'latin1'));

/** BMPString (UTF-16BE), as PKCS#12 friendlyName requires. */
export function bmpString(s: string): Buffer {
  const le = Buffer.from(s, 'utf16le');
  return tlv(Tag.BMP_STRING, le.swap16());
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));

function assertValidDate(date: Date): void {
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) throw fail('invalid_input', 'invalid date');
}

/** The ASCII content of a UTCTime (YYMMDDHHMMSSZ); only for years 1950–2049. */
export function utcTimeText(date: Date): string {
  assertValidDate(date);
  const y = date.getUTCFullYear();
  if (y < 1950 || y > 2049) throw fail('invalid_input', 'UTCTime only covers 1950–2049');
  return `${pad2(y % 100)}${pad2(date.getUTCMonth() + 1)}${pad2(date.getUTCDate())}${pad2(date.getUTCHours())}${pad2(date.getUTCMinutes())}${pad2(date.getUTCSeconds())}Z`;
}

/** The ASCII content of a GeneralizedTime (YYYYMMDDHHMMSSZ, no fractions — RFC 5280 §4.1.2.5.2). */
export function generalizedTimeText(date: Date): string {
  assertValidDate(date);
  const y = date.getUTCFullYear();
  if (y < 0 || y > 9999) throw fail('invalid_input', 'GeneralizedTime only covers years 0000–9999');
  return `${String(y).padStart(4, '0')}${pad2(date.getUTCMonth() + 1)}${pad2(date.getUTCDate())}${pad2(date.getUTCHours())}${pad2(date.getUTCMinutes())}${pad2(date.getUTCSeconds())}Z`;
}

export const utcTime = (date: Date): Buffer => tlv(Tag.UTC_TIME, Buffer.from(utcTimeText(date), 'latin1'));

export const generalizedTime = (date: Date): Buffer =>
  tlv(Tag.GENERALIZED_TIME, Buffer.from(generalizedTimeText(date), 'latin1'));

/** RFC 5280 Time: UTCTime through 2049, GeneralizedTime from 2050 on. */
export function time(date: Date): Buffer {
  assertValidDate(date);
  const y = date.getUTCFullYear();
  return y >= 1950 && y <= 2049 ? utcTime(date) : generalizedTime(date);
}

/** AlgorithmIdentifier with absent parameters, or with the given parameter TLV. */
export const algorithmIdentifier = (algorithm: string, parameters?: Uint8Array): Buffer =>
  parameters ? sequence(oid(algorithm), parameters) : sequence(oid(algorithm));

/** One Extension: `SEQUENCE { extnID, critical DEFAULT FALSE, extnValue OCTET STRING }`. */
export function extension(extnId: string, critical: boolean, value: Uint8Array): Buffer {
  return critical
    ? sequence(oid(extnId), boolean(true), octetString(value))
    : sequence(oid(extnId), octetString(value));
}
