import { createSign } from 'node:crypto';
import { CertwrightError } from '../errors.js';
import { prepareIssuer } from './certificate.js';
import type { CertificateInfo } from './certificate-info.js';
import {
  bitString,
  enumerated,
  explicit,
  extension,
  generalizedTime,
  integer,
  lengthSize,
  sequence,
  Tag,
  time,
  unsignedIntegerContent,
  writeLength,
} from './der.js';
import { authorityKeyIdentifierValue } from './extensions.js';
import { OID } from './oids.js';
import { pemEncode } from './pem.js';
import { type PrivateSigningKey, type SignatureAlgorithm, signData } from './signature.js';
import { isSigningKey } from './signing-key.js';

/**
 * X.509 v2 CRL writer (RFC 5280 §5). Entries are encoded one by one and concatenated once,
 * so the cost is linear in the number of entries (1,000,000 entries is a benchmark case).
 */

/** CRLReason names (RFC 5280 §5.3.1) with their codes; 7 is unused by the RFC. */
export const REVOCATION_REASON_CODES = {
  unspecified: 0,
  keyCompromise: 1,
  caCompromise: 2,
  affiliationChanged: 3,
  superseded: 4,
  cessationOfOperation: 5,
  certificateHold: 6,
  removeFromCRL: 8,
  privilegeWithdrawn: 9,
  aACompromise: 10,
} as const;

export type RevocationReason = keyof typeof REVOCATION_REASON_CODES;

const REASON_NAMES = new Map<number, RevocationReason>(
  Object.entries(REVOCATION_REASON_CODES).map(([k, v]) => [v, k as RevocationReason]),
);

export const revocationReasonName = (code: number): RevocationReason | undefined => REASON_NAMES.get(code);

export interface CrlEntry {
  /** Serial as hex (the stored form) or magnitude bytes. */
  serial: string | Uint8Array;
  revokedAt: Date;
  /** Omitted from the entry when absent or `unspecified` (RFC 5280 §5.3.1 SHOULD NOT). */
  reason?: RevocationReason;
  invalidityDate?: Date;
}

export interface BuildCrlOptions {
  issuerCert: Uint8Array | string | CertificateInfo;
  issuerKey: PrivateSigningKey;
  thisUpdate: Date;
  nextUpdate: Date;
  crlNumber: bigint | number;
  /** Entries to encode (may be empty or absent when `encodedEntries` carries them). */
  entries?: readonly CrlEntry[];
  /**
   * Entries already encoded by `encodeCrlEntry`, concatenated in blocks (as storage keeps
   * them); listed before `entries`. Each block is checked with `checkEncodedEntries` first.
   */
  encodedEntries?: readonly Uint8Array[];
  /**
   * Makes this a delta CRL (RFC 5280 §5.2.4): the CRL number of the complete CRL it is
   * relative to, written as the critical Delta CRL Indicator. It must be below `crlNumber`,
   * which the two share as one sequence.
   */
  deltaBaseCrlNumber?: bigint;
}

// Precomputed reasonCode extensions: there are only ten of them.
const REASON_EXTENSIONS = new Map<RevocationReason, Buffer>(
  (Object.entries(REVOCATION_REASON_CODES) as [RevocationReason, number][]).map(([name, code]) => [
    name,
    extension(OID.cRLReason, false, enumerated(code)),
  ]),
);

const badSerial = (serial: string): CertwrightError =>
  new CertwrightError('validation_failed', `CRL entry serial '${serial}' is not hex`);

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/**
 * Size of the INTEGER content for a hex serial, and a writer that puts it straight into the
 * output buffer: stored serials are hex, and decoding each into its own Buffer first would
 * allocate a million short-lived objects for a big CRL.
 */
function hexSerialLayout(hex: string): { start: number; length: number; pad: boolean } {
  let start = 0;
  while (start < hex.length - 1 && hex.charCodeAt(start) === 48) start++;
  const digits = hex.length - start;
  if (digits === 0) throw badSerial(hex);
  const first = hexValue(hex.charCodeAt(start));
  if (first < 0) throw badSerial(hex);
  // With an odd digit count the first octet is the single leading digit (< 0x10, high bit clear).
  const pad = digits % 2 === 0 && first >= 8;
  return { start, length: Math.ceil(digits / 2) + (pad ? 1 : 0), pad };
}

function writeHexSerial(
  out: Buffer,
  off: number,
  hex: string,
  layout: { start: number; length: number; pad: boolean },
): void {
  let o = off;
  let i = layout.start;
  if (layout.pad) out[o++] = 0;
  if ((hex.length - i) % 2 === 1) out[o++] = hexValue(hex.charCodeAt(i++));
  const expected = (hex.length - i) / 2;
  if (expected > 0 && out.write(i === 0 ? hex : hex.substring(i), o, expected, 'hex') !== expected)
    throw badSerial(hex);
}

const digit2 = (out: Buffer, off: number, v: number): void => {
  out[off] = 48 + ((v / 10) | 0);
  out[off + 1] = 48 + (v % 10);
};

/** Writes an RFC 5280 Time TLV at `off` straight into `out`; returns the new offset. */
function writeTime(out: Buffer, off: number, date: Date): number {
  const y = date.getUTCFullYear();
  if (Number.isNaN(y))
    throw new CertwrightError('validation_failed', 'CRL entry has an invalid revocation date');
  let o = off;
  if (y >= 1950 && y <= 2049) {
    out[o++] = Tag.UTC_TIME;
    out[o++] = 13;
    digit2(out, o, y % 100);
    o += 2;
  } else {
    if (y < 0 || y > 9999) throw new CertwrightError('validation_failed', 'CRL entry date out of range');
    out[o++] = Tag.GENERALIZED_TIME;
    out[o++] = 15;
    digit2(out, o, (y / 100) | 0);
    digit2(out, o + 2, y % 100);
    o += 4;
  }
  digit2(out, o, date.getUTCMonth() + 1);
  digit2(out, o + 2, date.getUTCDate());
  digit2(out, o + 4, date.getUTCHours());
  digit2(out, o + 6, date.getUTCMinutes());
  digit2(out, o + 8, date.getUTCSeconds());
  out[o + 10] = 0x5a; // 'Z'
  return o + 11;
}

const timeSize = (date: Date): number => {
  const y = date.getUTCFullYear();
  return y >= 1950 && y <= 2049 ? 15 : 17;
};

/**
 * Writes every revokedCertificates entry into one growing buffer: no per-entry TLV objects,
 * so a million entries cost a few allocations, not millions.
 */
function encodeEntries(entries: readonly CrlEntry[]): Buffer {
  let out = Buffer.allocUnsafe(Math.max(64, entries.length * 64));
  let off = 0;
  for (const e of entries) {
    const hexLayout = typeof e.serial === 'string' ? hexSerialLayout(e.serial) : undefined;
    const serialBytes = typeof e.serial === 'string' ? undefined : unsignedIntegerContent(e.serial);
    const serialLen = hexLayout ? hexLayout.length : serialBytes!.length;
    if (serialLen > 21)
      throw new CertwrightError('validation_failed', 'CRL entry serial longer than 20 octets');
    let reasonExt: Buffer | undefined;
    if (e.reason !== undefined && e.reason !== 'unspecified') {
      reasonExt = REASON_EXTENSIONS.get(e.reason);
      if (!reasonExt)
        throw new CertwrightError('validation_failed', `unknown revocation reason '${e.reason}'`);
    }
    const invalidityExt = e.invalidityDate
      ? extension(OID.invalidityDate, false, generalizedTime(e.invalidityDate))
      : undefined;
    const extsLen = (reasonExt?.length ?? 0) + (invalidityExt?.length ?? 0);
    const serialTlvLen = 2 + serialLen;
    const contentLen =
      serialTlvLen + timeSize(e.revokedAt) + (extsLen ? 1 + lengthSize(extsLen) + extsLen : 0);
    const total = 1 + lengthSize(contentLen) + contentLen;
    if (off + total > out.length) {
      const bigger = Buffer.allocUnsafe(Math.max(out.length * 2, off + total));
      out.copy(bigger, 0, 0, off);
      out = bigger;
    }
    out[off++] = Tag.SEQUENCE;
    off = writeLength(out, off, contentLen);
    out[off++] = Tag.INTEGER;
    out[off++] = serialLen;
    if (hexLayout) writeHexSerial(out, off, e.serial as string, hexLayout);
    else out.set(serialBytes!, off);
    off += serialLen;
    off = writeTime(out, off, e.revokedAt);
    if (extsLen) {
      out[off++] = Tag.SEQUENCE;
      off = writeLength(out, off, extsLen);
      if (reasonExt) {
        out.set(reasonExt, off);
        off += reasonExt.length;
      }
      if (invalidityExt) {
        out.set(invalidityExt, off);
        off += invalidityExt.length;
      }
    }
  }
  return out.subarray(0, off);
}

/**
 * The DER of one revokedCertificates entry (RFC 5280 §5.1.2.6), byte for byte what `buildCrl`
 * writes for it: storage keeps it per revoked version, so that a rebuild concatenates bytes.
 */
export function encodeCrlEntry(entry: CrlEntry): Buffer {
  return encodeEntries([entry]);
}

/** Bounds of one entry's content: at most 20-octet serial + GeneralizedTime + both extensions. */
const MAX_ENTRY_CONTENT = 127;

/**
 * Checks that `block` is a run of whole CRL entries as `encodeCrlEntry` writes them: each a
 * SEQUENCE with a short-form length whose content starts with an INTEGER of 1–21 octets and a
 * Time, and nothing left over. Stored bytes are signed into the CRL as they are, so a damaged
 * row must fail here rather than yield a signed CRL relying parties cannot parse. Returns the
 * number of entries.
 */
export function checkEncodedEntries(block: Uint8Array): number {
  let off = 0;
  let n = 0;
  const bad = (why: string) =>
    new CertwrightError('validation_failed', `stored CRL entry ${n} at offset ${off} is malformed: ${why}`);
  while (off < block.length) {
    if (block.length - off < 2 || block[off] !== Tag.SEQUENCE) throw bad('not a SEQUENCE');
    const len = block[off + 1]!;
    if (len > MAX_ENTRY_CONTENT || len < 2) throw bad('length out of range');
    const end = off + 2 + len;
    if (end > block.length) throw bad('truncated');
    const serialLen = block[off + 3]!;
    if (block[off + 2] !== Tag.INTEGER || serialLen < 1 || serialLen > 21) throw bad('no serial INTEGER');
    const timeAt = off + 4 + serialLen;
    if (timeAt + 2 > end) throw bad('no revocation date');
    const timeTag = block[timeAt];
    const timeLen = block[timeAt + 1];
    const timeOk =
      (timeTag === Tag.UTC_TIME && timeLen === 13) || (timeTag === Tag.GENERALIZED_TIME && timeLen === 15);
    if (!timeOk || timeAt + 2 + timeLen > end) throw bad('no revocation date');
    const rest = timeAt + 2 + timeLen;
    // What follows the date, if anything, is the crlEntryExtensions SEQUENCE filling the entry.
    if (rest < end && (block[rest] !== Tag.SEQUENCE || rest + 2 + block[rest + 1]! !== end))
      throw bad('trailing bytes');
    off = end;
    n++;
  }
  return n;
}

/** Builds and signs a CRL; returns DER. */
export function buildCrl(options: BuildCrlOptions): Buffer {
  const { thisUpdate, nextUpdate, crlNumber, entries } = options;
  if (!(nextUpdate.getTime() > thisUpdate.getTime())) {
    throw new CertwrightError('validation_failed', 'CRL nextUpdate must be later than thisUpdate');
  }
  if (BigInt(crlNumber) < 0n || BigInt(crlNumber) >= 1n << 159n) {
    throw new CertwrightError(
      'validation_failed',
      'CRL number must be a non-negative integer of at most 20 octets',
    );
  }
  const base = options.deltaBaseCrlNumber;
  if (base !== undefined && !(base >= 0n && base < BigInt(crlNumber))) {
    throw new CertwrightError(
      'validation_failed',
      'a delta CRL must name a base CRL number below its own CRL number',
    );
  }
  const issuer = prepareIssuer(options.issuerCert, options.issuerKey);
  const blocks: Uint8Array[] = [];
  for (const block of options.encodedEntries ?? []) {
    checkEncodedEntries(block);
    if (block.length) blocks.push(block);
  }
  if (entries?.length) blocks.push(encodeEntries(entries));
  const revokedLength = blocks.reduce((n, b) => n + b.length, 0);

  // The TBSCertList is kept as parts and hashed part by part, so the (possibly tens of MiB)
  // entry block is copied exactly once: into the final CRL.
  const tbsParts: Uint8Array[] = [
    integer(1), // v2
    issuer.signatureAlgorithm.identifier,
    issuer.certificate.subject.der,
    time(thisUpdate),
    time(nextUpdate),
  ];
  // An empty revokedCertificates must be omitted, not written empty (RFC 5280 §5.1.2.6).
  if (revokedLength) tbsParts.push(header(Tag.SEQUENCE, revokedLength), ...blocks);
  tbsParts.push(
    explicit(
      0,
      sequence(
        extension(
          OID.authorityKeyIdentifier,
          false,
          authorityKeyIdentifierValue(issuer.certificate.keyIdentifier),
        ),
        extension(OID.cRLNumber, false, integer(BigInt(crlNumber))),
        ...(base !== undefined ? [extension(OID.deltaCRLIndicator, true, integer(base))] : []),
      ),
    ),
  );
  const tbsLength = tbsParts.reduce((n, p) => n + p.length, 0);
  tbsParts.unshift(header(Tag.SEQUENCE, tbsLength));

  const signature = signParts(issuer.signatureAlgorithm, issuer.privateKey, tbsParts);
  const tail = [issuer.signatureAlgorithm.identifier, bitString(signature)];
  const total = tbsParts[0]!.length + tbsLength + tail[0]!.length + tail[1]!.length;
  return Buffer.concat([header(Tag.SEQUENCE, total), ...tbsParts, ...tail]);
}

/** A bare TLV header (tag and length) for content written elsewhere. */
function header(tag: number, length: number): Buffer {
  const out = Buffer.allocUnsafe(1 + lengthSize(length));
  out[0] = tag;
  writeLength(out, 1, length);
  return out;
}

/** Signs the concatenation of `parts` without building it, when the algorithm can stream. */
function signParts(alg: SignatureAlgorithm, key: PrivateSigningKey, parts: readonly Uint8Array[]): Buffer {
  // EdDSA is one-shot by definition (it hashes the message twice), so it needs the bytes whole;
  // a key custody takes the message in one call too.
  if (alg.hash === null || isSigningKey(key)) return signData(alg, key, Buffer.concat(parts));
  const signer = createSign(alg.hash);
  for (const p of parts) signer.update(p);
  return signer.sign(key);
}

export const crlToPem = (der: Uint8Array): string => pemEncode('X509 CRL', der);
