import { fail } from '../../errors.js';
import { Tag, tlvOf } from '../der.js';
import type { DerBounds } from '../der-reader.js';
import { malformed } from '../der-reader.js';

/**
 * BER → DER for CMS from outside. Streaming encoders (OpenSSL with `-stream`, BouncyCastle,
 * Windows) write indefinite lengths and chunked (constructed) OCTET STRINGs; our DER reader
 * refuses both. This rewrites them as DER: definite minimal lengths, one primitive OCTET
 * STRING per constructed one. Input that already is DER comes back unchanged (the same
 * object), so the bytes a signature covers are never touched when they were DER to begin with.
 *
 * Bounded like {@link assertDerBounds}: size first, then every value counts against the node
 * cap and nesting against the depth cap (the recursion depth is the nesting depth).
 */
export function normalizeBer(buf: Uint8Array, bounds: DerBounds, what: string): Uint8Array {
  if (buf.length > bounds.maxBytes) {
    throw fail('too_large', `${what}: ${buf.length} bytes exceeds the ${bounds.maxBytes}-byte limit`);
  }
  const state = { nodes: 0, changed: false };
  const { node, end } = parseNode(buf, 0, buf.length, 1, bounds, state, what);
  if (end !== buf.length) throw malformed(what, 'trailing bytes after the outer structure');
  if (node === END_OF_CONTENTS) throw malformed(what, 'unexpected end-of-contents');
  if (!state.changed) return buf;
  const out = encode(node);
  if (out.length > bounds.maxBytes) {
    throw fail('too_large', `${what}: ${out.length} bytes exceeds the ${bounds.maxBytes}-byte limit`);
  }
  return out;
}

interface BerNode {
  tag: number;
  /** Content octets of a primitive value. */
  content?: Uint8Array;
  /** Children of a constructed value. */
  children?: BerNode[];
}

const END_OF_CONTENTS: BerNode = { tag: 0 };

function parseNode(
  buf: Uint8Array,
  offset: number,
  limit: number,
  depth: number,
  bounds: DerBounds,
  state: { nodes: number; changed: boolean },
  what: string,
): { node: BerNode; end: number } {
  if (++state.nodes > bounds.maxNodes) throw malformed(what, `more than ${bounds.maxNodes} ASN.1 values`);
  if (depth > bounds.maxDepth) throw malformed(what, `nested deeper than ${bounds.maxDepth} levels`);
  if (offset + 2 > limit) throw malformed(what, 'truncated');
  const tag = buf[offset]!;
  if ((tag & 0x1f) === 0x1f) throw malformed(what, 'high tag numbers are not used by CMS');
  const first = buf[offset + 1]!;
  if (tag === 0 && first === 0) return { node: END_OF_CONTENTS, end: offset + 2 };
  if (tag === 0) throw malformed(what, 'malformed end-of-contents');
  const constructed = (tag & 0x20) !== 0;

  let contentStart: number;
  let end: number | undefined;
  if (first === 0x80) {
    if (!constructed) throw malformed(what, 'indefinite length on a primitive value');
    state.changed = true;
    contentStart = offset + 2;
  } else if (first < 0x80) {
    contentStart = offset + 2;
    end = contentStart + first;
  } else {
    const n = first & 0x7f;
    if (n > 4) throw malformed(what, 'length field too large');
    if (offset + 2 + n > limit) throw malformed(what, 'truncated (length field)');
    let length = 0;
    for (let i = 0; i < n; i++) length = length * 256 + buf[offset + 2 + i]!;
    if (buf[offset + 2] === 0 || length < 0x80) state.changed = true; // non-minimal: BER only
    contentStart = offset + 2 + n;
    end = contentStart + length;
  }
  if (end !== undefined && end > limit) throw malformed(what, 'truncated (content shorter than its length)');

  if (!constructed) return { node: { tag, content: buf.subarray(contentStart, end) }, end: end! };

  const children: BerNode[] = [];
  let pos = contentStart;
  for (;;) {
    if (end !== undefined && pos === end) break;
    const child = parseNode(buf, pos, end ?? limit, depth + 1, bounds, state, what);
    pos = child.end;
    if (child.node === END_OF_CONTENTS) {
      if (end !== undefined) throw malformed(what, 'end-of-contents inside a definite length');
      break;
    }
    children.push(child.node);
  }
  if (tag === (Tag.OCTET_STRING | 0x20)) {
    // A chunked OCTET STRING: DER has one primitive value holding the concatenation.
    state.changed = true;
    return { node: { tag: Tag.OCTET_STRING, content: concatOctetStrings(children, what) }, end: pos };
  }
  return { node: { tag, children }, end: pos };
}

/** The concatenated content of OCTET STRING chunks (X.690 §8.7.3), already flattened below. */
function concatOctetStrings(chunks: readonly BerNode[], what: string): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const c of chunks) {
    if (c.tag !== Tag.OCTET_STRING || !c.content)
      throw malformed(what, 'a chunked OCTET STRING holds other values');
    parts.push(c.content);
  }
  return Buffer.concat(parts);
}

function encode(node: BerNode): Buffer {
  if (node.content) return tlvOf(node.tag, [node.content]);
  return tlvOf(node.tag, (node.children ?? []).map(encode));
}
