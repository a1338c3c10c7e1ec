import { fail } from '../errors.js';
import { serialToHex } from './certificate-info.js';
import { Tag } from './der.js';
import { children, content, expectTag, readRoot } from './der-reader.js';
import { decodeAuthorityKeyIdentifier, type RawExtension } from './extensions.js';
import { OID } from './oids.js';

/**
 * The RFC 9773 §4.1 certificate identifier: `base64url(AKI keyIdentifier) "." base64url(serial)`,
 * where the serial is the content octets of the DER INTEGER (a leading zero octet included when
 * the high bit is set). It comes from the URL of an unauthenticated request and from a client's
 * `replaces`, so it is bounded and decoded strictly before anything looks it up.
 */
export interface AcmeCertId {
  /** The authority key identifier octets. */
  keyIdentifier: Uint8Array;
  /** The serial number in the stored form (lower-case hex, no leading zeros). */
  serialNumber: string;
}

/** A key identifier is 20 octets (SHA-1) in practice; RFC 5280 leaves it open, so allow 64. */
const MAX_KEY_ID_BYTES = 64;
/** RFC 5280 §4.1.2.2: at most 20 octets; a leading zero for a high bit makes 21. */
const MAX_SERIAL_BYTES = 21;
/** Both parts at their largest, base64url-encoded, plus the dot. */
export const MAX_CERT_ID_LENGTH =
  Math.ceil((MAX_KEY_ID_BYTES * 4) / 3) + Math.ceil((MAX_SERIAL_BYTES * 4) / 3) + 1;

const BASE64URL = /^[A-Za-z0-9_-]+$/;

function invalid(problem: string) {
  return fail('malformed', `certificate identifier ${problem}`);
}

function decodeBase64Url(part: string, what: string): Buffer {
  // A length of 1 mod 4 encodes no whole octet; other lengths must re-encode to themselves, so
  // non-canonical trailing bits (two spellings of one identifier) are refused.
  if (!BASE64URL.test(part) || part.length % 4 === 1) throw invalid(`has an invalid ${what} (not base64url)`);
  const bytes = Buffer.from(part, 'base64url');
  if (bytes.toString('base64url') !== part) throw invalid(`has a non-canonical ${what} encoding`);
  return bytes;
}

/** Parses a certID; every refusal is `malformed`. */
export function parseAcmeCertId(text: string): AcmeCertId {
  if (typeof text !== 'string' || text.length === 0) throw invalid('is empty');
  if (text.length > MAX_CERT_ID_LENGTH) throw invalid('is too long');
  const dot = text.indexOf('.');
  if (dot < 0 || text.indexOf('.', dot + 1) >= 0) throw invalid('must be two base64url parts joined by "."');
  const keyIdentifier = decodeBase64Url(text.slice(0, dot), 'key identifier');
  const serial = decodeBase64Url(text.slice(dot + 1), 'serial number');
  if (keyIdentifier.length === 0 || keyIdentifier.length > MAX_KEY_ID_BYTES)
    throw invalid('has a key identifier of unusual length');
  if (serial.length === 0 || serial.length > MAX_SERIAL_BYTES)
    throw invalid('has a serial number of unusual length');
  if ((serial[0]! & 0x80) !== 0) throw invalid('has a negative serial number');
  if (serial.length > 1 && serial[0] === 0 && (serial[1]! & 0x80) === 0)
    throw invalid('has a serial number that is not minimally encoded');
  return { keyIdentifier, serialNumber: serialToHex(serial) };
}

/** The content octets of the DER INTEGER of a stored (hex) serial. */
function serialContent(serialHex: string): Buffer {
  const even = serialHex.length % 2 === 1 ? `0${serialHex}` : serialHex;
  const bytes = Buffer.from(even, 'hex');
  return (bytes[0]! & 0x80) !== 0 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes;
}

/** The certID of a certificate issued under `keyIdentifier` with serial `serialHex`. */
export function formatAcmeCertId(keyIdentifier: Uint8Array, serialHex: string): string {
  return `${Buffer.from(keyIdentifier).toString('base64url')}.${serialContent(serialHex).toString('base64url')}`;
}

/**
 * The keyIdentifier of a certificate's AuthorityKeyIdentifier extension (RFC 5280 §4.2.1.1),
 * or null when it has none. Input is an extension of a certificate this service holds.
 */
export function authorityKeyIdentifierOf(extensions: readonly RawExtension[]): Uint8Array | null {
  const aki = extensions.find((e) => e.oid === OID.authorityKeyIdentifier);
  return aki ? decodeAuthorityKeyIdentifier(aki.value) : null;
}
