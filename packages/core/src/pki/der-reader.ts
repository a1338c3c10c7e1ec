import { type CertwrightError, fail } from '../errors.js';
import { Tag } from './der.js';

/**
 * A small, strict DER reader for the structures certwright parses itself (PKCS#10, OCSP
 * requests, certificates it holds). It never recurses on input it has not been asked to
 * descend into, refuses BER-only forms (indefinite lengths, non-minimal lengths, high tag
 * numbers), and `assertDerBounds` caps size, node count and depth before anything else
 * touches untrusted bytes.
 */

export interface DerNode {
  /** The identifier octet (class, constructed bit and tag number in one byte). */
  readonly tag: number;
  /** Offset of the identifier octet. */
  readonly start: number;
  /** Offset of the first content octet. */
  readonly contentStart: number;
  /** Offset just past the last content octet. */
  readonly end: number;
}

export interface DerBounds {
  maxBytes: number;
  maxNodes: number;
  maxDepth: number;
}

/** Raised for malformed DER: reason `malformed`, so every surface maps it to a client error. */
export function malformed(what: string, problem: string): CertwrightError {
  return fail('malformed', `${what}: ${problem}`);
}

/** Reads one TLV header at `offset`, checking that it fits inside `limit`. */
export function readNode(buf: Uint8Array, offset: number, limit: number = buf.length): DerNode {
  if (offset >= limit) throw malformed('DER', 'truncated (missing tag)');
  const tag = buf[offset]!;
  if ((tag & 0x1f) === 0x1f) throw malformed('DER', 'high tag numbers are not used by these structures');
  if (offset + 1 >= limit) throw malformed('DER', 'truncated (missing length)');
  const first = buf[offset + 1]!;
  let length: number;
  let contentStart: number;
  if (first < 0x80) {
    length = first;
    contentStart = offset + 2;
  } else {
    const n = first & 0x7f;
    if (n === 0) throw malformed('DER', 'indefinite length is not DER');
    if (n > 4) throw malformed('DER', 'length field too large');
    if (offset + 2 + n > limit) throw malformed('DER', 'truncated (length field)');
    length = 0;
    for (let i = 0; i < n; i++) length = length * 256 + buf[offset + 2 + i]!;
    if (buf[offset + 2] === 0 || length < 0x80) throw malformed('DER', 'non-minimal length encoding');
    contentStart = offset + 2 + n;
  }
  const end = contentStart + length;
  if (end > limit) throw malformed('DER', 'truncated (content shorter than its length)');
  return { tag, start: offset, contentStart, end };
}

/** Parses exactly one TLV spanning the whole buffer. */
export function readRoot(buf: Uint8Array): DerNode {
  const node = readNode(buf, 0);
  if (node.end !== buf.length) throw malformed('DER', 'trailing bytes after the outer structure');
  return node;
}

export const isConstructed = (node: DerNode): boolean => (node.tag & 0x20) !== 0;

/** The direct children of a constructed node. */
export function children(buf: Uint8Array, node: DerNode): DerNode[] {
  if (!isConstructed(node)) throw malformed('DER', 'expected a constructed value');
  const out: DerNode[] = [];
  let offset = node.contentStart;
  while (offset < node.end) {
    const child = readNode(buf, offset, node.end);
    out.push(child);
    offset = child.end;
  }
  return out;
}

export const content = (buf: Uint8Array, node: DerNode): Uint8Array =>
  buf.subarray(node.contentStart, node.end);
export const raw = (buf: Uint8Array, node: DerNode): Uint8Array => buf.subarray(node.start, node.end);

/**
 * Walks the whole tree of constructed values without recursion and refuses input that is
 * too large, has too many nodes, or nests too deeply. Run it on untrusted bytes before any
 * parser (ours or a library's) sees them.
 */
export function assertDerBounds(buf: Uint8Array, bounds: DerBounds, what: string): void {
  if (buf.length > bounds.maxBytes) {
    throw fail('too_large', `${what}: ${buf.length} bytes exceeds the ${bounds.maxBytes}-byte limit`);
  }
  readRoot(buf);
  // Offsets and depths on flat number stacks: no object per value, however many there are.
  let nodes = 0;
  const starts = [0];
  const limits = [buf.length];
  const depths = [1];
  while (starts.length > 0) {
    const start = starts.pop()!;
    const limit = limits.pop()!;
    const depth = depths.pop()!;
    if (++nodes > bounds.maxNodes) {
      throw malformed(what, `more than ${bounds.maxNodes} ASN.1 values`);
    }
    if (depth > bounds.maxDepth) throw malformed(what, `nested deeper than ${bounds.maxDepth} levels`);
    const node = readNode(buf, start, limit);
    if (!isConstructed(node)) continue;
    let offset = node.contentStart;
    while (offset < node.end) {
      const child = readNode(buf, offset, node.end);
      starts.push(offset);
      limits.push(node.end);
      depths.push(depth + 1);
      offset = child.end;
    }
  }
}

/** Checks a node's tag, naming the field in the error. */
export function expectTag(node: DerNode | undefined, tag: number, field: string): DerNode {
  if (!node) throw malformed(field, 'missing');
  if (node.tag !== tag) {
    throw malformed(field, `unexpected tag 0x${node.tag.toString(16)} (expected 0x${tag.toString(16)})`);
  }
  return node;
}

/** Decodes an OBJECT IDENTIFIER node to dotted form. */
export function readOid(buf: Uint8Array, node: DerNode | undefined, field = 'OID'): string {
  const n = expectTag(node, Tag.OID, field);
  const bytes = content(buf, n);
  if (bytes.length === 0 || bytes.length > 64) throw malformed(field, 'bad OID length');
  // Arcs are numbers until they outgrow 2^46 (real OIDs never do); then BigInt takes over.
  let text = '';
  let value = 0;
  let big: bigint | null = null;
  let arcStart = true;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (arcStart && b === 0x80) throw malformed(field, 'non-minimal OID arc');
    arcStart = false;
    if (big !== null) big = (big << 7n) | BigInt(b & 0x7f);
    else if (value >= 2 ** 46) big = (BigInt(value) << 7n) | BigInt(b & 0x7f);
    else value = value * 128 + (b & 0x7f);
    if ((b & 0x80) !== 0) {
      if (i === bytes.length - 1) throw malformed(field, 'truncated OID arc');
      continue;
    }
    if (text === '') {
      // X.690 §8.19.4: the first subidentifier packs the first two arcs.
      if (big !== null) text = `2.${big - 80n}`;
      else text = value < 40 ? `0.${value}` : value < 80 ? `1.${value - 40}` : `2.${value - 80}`;
    } else {
      text += `.${big ?? value}`;
    }
    value = 0;
    big = null;
    arcStart = true;
  }
  return text;
}

/** Magnitude bytes of a non-negative INTEGER (leading zero octet stripped). */
export function readUnsignedInteger(buf: Uint8Array, node: DerNode | undefined, field: string): Uint8Array {
  const n = expectTag(node, Tag.INTEGER, field);
  const bytes = content(buf, n);
  if (bytes.length === 0) throw malformed(field, 'empty INTEGER');
  if ((bytes[0]! & 0x80) !== 0) throw malformed(field, 'negative INTEGER');
  return bytes.length > 1 && bytes[0] === 0 ? bytes.subarray(1) : bytes;
}

/**
 * Magnitude bytes of a strictly DER-encoded positive-or-zero INTEGER (X.690 §8.3.2: no
 * redundant leading octet), for key material where a non-minimal form hides a second meaning.
 */
export function readPositiveInteger(buf: Uint8Array, node: DerNode | undefined, field: string): Uint8Array {
  const bytes = content(buf, expectTag(node, Tag.INTEGER, field));
  if (bytes.length === 0) throw malformed(field, 'empty INTEGER');
  if ((bytes[0]! & 0x80) !== 0) throw malformed(field, 'negative INTEGER');
  if (bytes.length > 1 && bytes[0] === 0 && (bytes[1]! & 0x80) === 0)
    throw malformed(field, 'non-minimal INTEGER encoding');
  return bytes[0] === 0 ? bytes.subarray(1) : bytes;
}

/** A small INTEGER (version fields, enumerations) as a number. */
export function readSmallInteger(
  buf: Uint8Array,
  node: DerNode | undefined,
  field: string,
  tag: number = Tag.INTEGER,
): number {
  const n = expectTag(node, tag, field);
  const bytes = content(buf, n);
  if (bytes.length === 0 || bytes.length > 4) throw malformed(field, 'INTEGER out of range');
  let v = (bytes[0]! & 0x80) !== 0 ? -1 : 0;
  for (const b of bytes) v = v * 256 + b;
  return v;
}

/** Parses UTCTime or GeneralizedTime (the RFC 5280 profile: `Z`, whole seconds). */
export function readTime(buf: Uint8Array, node: DerNode | undefined, field: string): Date {
  if (!node) throw malformed(field, 'missing');
  const text = Buffer.from(content(buf, node)).toString('latin1');
  const utc = node.tag === Tag.UTC_TIME ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text) : null;
  const gen =
    node.tag === Tag.GENERALIZED_TIME
      ? /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.\d+)?Z$/.exec(text)
      : null;
  const m = utc ?? gen;
  if (!m) throw malformed(field, 'not an RFC 5280 time');
  let year = Number(m[1]);
  // RFC 5280 §4.1.2.5.1: two-digit years 50–99 are 19xx, 00–49 are 20xx.
  if (utc) year += year >= 50 ? 1900 : 2000;
  const [month, day, hour, minute, second] = [m[2], m[3], m[4], m[5], m[6]].map(Number) as number[];
  const date = new Date(Date.UTC(year, month! - 1, day, hour, minute, second));
  // Date.UTC rolls month 13 or 31 February over into the next period; a time must name itself.
  if (
    date.getUTCFullYear() !== year ||
    date.getUTCMonth() !== month! - 1 ||
    date.getUTCDate() !== day ||
    date.getUTCHours() !== hour ||
    date.getUTCMinutes() !== minute ||
    date.getUTCSeconds() !== second
  ) {
    throw malformed(field, 'invalid date');
  }
  return date;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Decodes the directory string types that appear in names and attributes. */
export function readString(buf: Uint8Array, node: DerNode | undefined, field: string): string {
  if (!node) throw malformed(field, 'missing');
  // A view, not a copy: names hold thousands of these in the worst accepted input.
  const bytes = Buffer.from(buf.buffer, buf.byteOffset + node.contentStart, node.end - node.contentStart);
  switch (node.tag) {
    case Tag.UTF8_STRING:
      try {
        return UTF8.decode(bytes);
      } catch {
        throw malformed(field, 'invalid UTF-8');
      }
    case Tag.PRINTABLE_STRING:
    case Tag.IA5_STRING:
    case Tag.T61_STRING:
    case 0x1a: // VisibleString
    case 0x12: // NumericString
      return bytes.toString('latin1');
    case Tag.BMP_STRING: {
      if (bytes.length % 2 !== 0) throw malformed(field, 'odd BMPString length');
      return Buffer.from(bytes).swap16().toString('utf16le'); // a copy: swap16 works in place
    }
    case Tag.UNIVERSAL_STRING: {
      if (bytes.length % 4 !== 0) throw malformed(field, 'bad UniversalString length');
      const points: number[] = [];
      for (let i = 0; i < bytes.length; i += 4) {
        const cp = bytes.readUInt32BE(i);
        if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
          throw malformed(field, 'UniversalString holds a value that is not a Unicode scalar');
        points.push(cp);
      }
      // In slices: a spread argument list has a size limit.
      let s = '';
      for (let i = 0; i < points.length; i += 4096) s += String.fromCodePoint(...points.slice(i, i + 4096));
      return s;
    }
    default:
      throw malformed(field, `unsupported string type 0x${node.tag.toString(16)}`);
  }
}

/** The bytes of a BIT STRING with no unused bits (keys, signatures). */
export function readBitStringBytes(buf: Uint8Array, node: DerNode | undefined, field: string): Uint8Array {
  const n = expectTag(node, Tag.BIT_STRING, field);
  const bytes = content(buf, n);
  if (bytes.length === 0) throw malformed(field, 'empty BIT STRING');
  if (bytes[0] !== 0) throw malformed(field, 'BIT STRING with unused bits');
  return bytes.subarray(1);
}
