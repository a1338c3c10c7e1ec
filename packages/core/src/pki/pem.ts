import { fail } from '../errors.js';

/**
 * PEM (RFC 7468) encoding and decoding. Decoding checks the label, so a private key can never
 * be mistaken for a certificate (or the reverse) by a caller that passes the wrong file.
 */

export type PemLabel =
  | 'CERTIFICATE'
  | 'CERTIFICATE REQUEST'
  | 'X509 CRL'
  | 'PRIVATE KEY'
  | 'ENCRYPTED PRIVATE KEY'
  | 'PUBLIC KEY'
  | (string & {});

export interface PemBlock {
  label: string;
  der: Buffer;
}

/** Encodes DER bytes as PEM with 64-character lines and a trailing newline. */
export function pemEncode(label: PemLabel, der: Uint8Array): string {
  const b64 = Buffer.from(der.buffer, der.byteOffset, der.byteLength).toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += 64) lines.push(b64.slice(i, i + 64));
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

const LABEL = /^[A-Z0-9 ]{1,64}$/;

/**
 * Finds BEGIN/END pairs with indexOf, so that text with many BEGIN lines and no END (a
 * hostile upload) costs one pass instead of a regex rescan per BEGIN.
 */
function* pemBlocks(text: string): Generator<{ begin: string; body: string; end: string }> {
  let pos = 0;
  for (;;) {
    const b = text.indexOf('-----BEGIN ', pos);
    if (b < 0) return;
    const bEnd = text.indexOf('-----', b + 11);
    if (bEnd < 0) return;
    const e = text.indexOf('-----END ', bEnd + 5);
    if (e < 0) return;
    const eEnd = text.indexOf('-----', e + 9);
    if (eEnd < 0) return;
    const begin = text.slice(b + 11, bEnd);
    const end = text.slice(e + 9, eEnd);
    if (!LABEL.test(begin) || !LABEL.test(end)) {
      throw fail('malformed', 'PEM: malformed BEGIN/END line');
    }
    yield { begin, body: text.slice(bEnd + 5, e), end };
    pos = eEnd + 5;
  }
}

/** Strict base64: only the base64 alphabet (whitespace removed first), correct padding. */
export function decodeBase64Strict(text: string, what: string): Buffer {
  const compact = text.replace(/\s+/g, '');
  if (compact.length === 0 || compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(compact)) {
    throw fail('malformed', `${what}: not valid base64`);
  }
  return Buffer.from(compact, 'base64');
}

export interface PemLimits {
  /** Characters of text, checked before anything is decoded. */
  maxChars: number;
  /** PEM blocks in one text (a chain, a CA bundle). */
  maxBlocks: number;
}

/**
 * A certificate is 1–6 KiB of PEM and a chain a handful of them; a bundle of 100 CA
 * certificates stays under 1 MiB.
 */
export const DEFAULT_PEM_LIMITS: Readonly<PemLimits> = Object.freeze({
  maxChars: 1024 * 1024,
  maxBlocks: 100,
});

/** All PEM blocks in a text, in order (headers such as Proc-Type are refused). */
export function pemDecodeAll(text: string, limits: Partial<PemLimits> = {}): PemBlock[] {
  const { maxChars, maxBlocks } = { ...DEFAULT_PEM_LIMITS, ...limits };
  if (typeof text !== 'string') throw fail('invalid_input', 'PEM: expected text');
  if (text.length > maxChars)
    throw fail('too_large', `PEM: ${text.length} characters exceeds the ${maxChars}-character limit`);
  const out: PemBlock[] = [];
  for (const { begin, body, end } of pemBlocks(text)) {
    if (out.length === maxBlocks) throw fail('too_large', `PEM: more than ${maxBlocks} blocks`);
    if (begin !== end) {
      throw fail('malformed', `PEM: BEGIN ${begin} does not match END ${end}`);
    }
    if (body.includes(':')) {
      throw fail('malformed', 'PEM: encapsulated headers (legacy encryption) are not supported');
    }
    out.push({ label: begin, der: decodeBase64Strict(body, `PEM ${begin}`) });
  }
  return out;
}

/**
 * Decodes exactly one PEM block whose label is one of `labels`. Extra blocks are refused so
 * that a bundle is never silently truncated to its first certificate.
 */
export function pemDecode(
  text: string,
  labels: PemLabel | readonly PemLabel[],
  limits: Partial<PemLimits> = {},
): Buffer {
  const accepted = typeof labels === 'string' ? [labels] : labels;
  const blocks = pemDecodeAll(text, limits);
  if (blocks.length === 0) {
    throw fail('malformed', `PEM: no ${accepted.join(' or ')} block found`);
  }
  if (blocks.length > 1) {
    throw fail('malformed', `PEM: expected one block, found ${blocks.length}`);
  }
  const block = blocks[0]!;
  if (!accepted.includes(block.label)) {
    throw fail('malformed', `PEM: expected ${accepted.join(' or ')}, found ${block.label}`);
  }
  return block.der;
}

/** Decodes a PEM bundle of certificates (a chain), refusing any other label. */
export function pemDecodeCertificates(text: string, limits: Partial<PemLimits> = {}): Buffer[] {
  const blocks = pemDecodeAll(text, limits);
  for (const b of blocks) {
    if (b.label !== 'CERTIFICATE') {
      throw fail('malformed', `PEM: expected CERTIFICATE blocks, found ${b.label}`);
    }
  }
  return blocks.map((b) => b.der);
}
