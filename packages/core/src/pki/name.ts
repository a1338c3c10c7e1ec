import { CertwrightError, fail } from '../errors.js';
import { ia5String, oid, printableString, sequenceOf, setOfList, Tag, utf8String } from './der.js';
import { children, type DerNode, expectTag, raw, readOid, readString } from './der-reader.js';
import { NAME_ATTRIBUTE_OIDS } from './oids.js';

/**
 * X.501 Name (RFC 5280 §4.1.2.4): encoding from RFC 4514 strings or attribute lists, and
 * decoding to both.
 */

/** One attribute of a relative distinguished name: a short name (`CN`) or a dotted OID. */
export interface NameAttribute {
  type: string;
  value: string;
}

/**
 * A name either as an RFC 4514 string (`CN=host,O=Example,C=DE` — most specific first, so it
 * is written to DER in reverse), or as RDNs in DER order (least specific first, the order
 * `openssl -subj /C=DE/O=Example/CN=host` uses); an inner array is a multi-valued RDN.
 */
export type DistinguishedName = string | (NameAttribute | NameAttribute[])[];

const SHORT_NAMES: Record<string, string> = Object.fromEntries(
  Object.entries(NAME_ATTRIBUTE_OIDS)
    .filter(([k]) => k !== 'EMAILADDRESS')
    .map(([k, v]) => [
      v,
      k === 'SERIALNUMBER'
        ? 'serialNumber'
        : k === 'GIVENNAME'
          ? 'givenName'
          : k === 'TITLE'
            ? 'title'
            : k === 'STREET'
              ? 'street'
              : k,
    ]),
);

function attributeOid(type: string): string {
  if (/^\d+(\.\d+)+$/.test(type)) return type;
  const found = NAME_ATTRIBUTE_OIDS[type.toUpperCase()];
  if (!found) {
    throw new CertwrightError('validation_failed', `unknown name attribute type '${type}'`, {
      fields: [{ field: 'subject', message: `unknown attribute type '${type}'` }],
    });
  }
  return found;
}

const isAscii = (s: string): boolean => Buffer.from(s, 'utf8').length === s.length;

const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]*$/;

function encodeValue(attrOid: string, value: string): Buffer {
  switch (attrOid) {
    case NAME_ATTRIBUTE_OIDS.C:
      if (!/^[A-Z]{2}$/.test(value)) {
        throw new CertwrightError('validation_failed', `country must be a two-letter code, got '${value}'`, {
          fields: [{ field: 'subject.C', message: 'must be an ISO 3166 two-letter code' }],
        });
      }
      return printableString(value);
    case NAME_ATTRIBUTE_OIDS.SERIALNUMBER:
      // X.520 requires PrintableString here; fall back to UTF8String only when impossible.
      return PRINTABLE.test(value) ? printableString(value) : utf8String(value);
    case NAME_ATTRIBUTE_OIDS.DC:
    case NAME_ATTRIBUTE_OIDS.E:
      // RFC 4519 / PKCS#9 define these as IA5String.
      if (!isAscii(value)) {
        throw new CertwrightError('validation_failed', `'${value}' must be ASCII`);
      }
      return ia5String(value);
    default:
      return utf8String(value);
  }
}

function unescapeValue(v: string): string {
  let out = '';
  for (let i = 0; i < v.length; i++) {
    const c = v[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = v.slice(i + 1, i + 3);
    if (/^[0-9A-Fa-f]{2}$/.test(next)) {
      // \XX sequences may spell UTF-8 bytes; collect consecutive ones before decoding.
      const bytes: number[] = [];
      while (v[i] === '\\' && /^[0-9A-Fa-f]{2}$/.test(v.slice(i + 1, i + 3))) {
        bytes.push(Number.parseInt(v.slice(i + 1, i + 3), 16));
        i += 3;
      }
      i--;
      out += Buffer.from(bytes).toString('utf8');
    } else if (i + 1 < v.length) {
      out += v[++i];
    } else {
      throw new CertwrightError('validation_failed', 'name ends with a lone backslash');
    }
  }
  return out;
}

/** Splits on a separator that is not escaped with a backslash (slices, not per-character copies). */
function splitUnescaped(s: string, sep: string): string[] {
  const parts: string[] = [];
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\') i++;
    else if (c === sep) {
      parts.push(s.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(s.slice(start));
  return parts;
}

/**
 * Bounds for names from callers. RFC 5280's upper bounds keep each attribute of a real name
 * under 200 characters and real names under a dozen attributes; these leave generous room and
 * keep the work and memory of one name small whatever the input.
 */
export const NAME_LIMITS = Object.freeze({
  /** Characters of an RFC 4514 string. */
  maxTextLength: 8192,
  /** Attributes in one name, over all RDNs. */
  maxAttributes: 64,
  /** Characters of one attribute value. */
  maxValueLength: 1024,
});

const nameRejected = (message: string): CertwrightError =>
  fail('invalid_input', message, { fields: [{ field: 'subject', message }] });

/** Parses an RFC 4514 string into RDNs in DER order. */
export function parseDistinguishedName(text: string): NameAttribute[][] {
  if (typeof text !== 'string') throw nameRejected('a distinguished name must be a string');
  if (text.length > NAME_LIMITS.maxTextLength)
    throw nameRejected(`a distinguished name longer than ${NAME_LIMITS.maxTextLength} characters`);
  if (text.trim() === '') return [];
  const rdnTexts = splitUnescaped(text, ',');
  if (rdnTexts.length > NAME_LIMITS.maxAttributes)
    throw nameRejected(`a distinguished name with more than ${NAME_LIMITS.maxAttributes} attributes`);
  let attributes = 0;
  const rdns = rdnTexts.map((rdn) =>
    splitUnescaped(rdn, '+').map((atv) => {
      if (++attributes > NAME_LIMITS.maxAttributes)
        throw nameRejected(`a distinguished name with more than ${NAME_LIMITS.maxAttributes} attributes`);
      const eq = atv.indexOf('=');
      if (eq <= 0) throw new CertwrightError('validation_failed', `malformed name component '${atv.trim()}'`);
      const type = atv.slice(0, eq).trim();
      const rawValue = atv.slice(eq + 1).trim();
      if (rawValue.startsWith('#')) {
        throw new CertwrightError('validation_failed', 'hex-encoded (#) name values are not supported');
      }
      return { type, value: unescapeValue(rawValue) };
    }),
  );
  return rdns.reverse();
}

/** The RDNs of a name given as attribute lists, checked for shape and size. */
function rdnsOf(name: readonly (NameAttribute | NameAttribute[])[]): NameAttribute[][] {
  if (!Array.isArray(name)) throw nameRejected('a distinguished name must be a string or a list of RDNs');
  let attributes = 0;
  return name.map((r) => {
    const rdn = Array.isArray(r) ? r : [r];
    if (rdn.length === 0) throw nameRejected('an RDN needs at least one attribute');
    for (const a of rdn) {
      if (typeof a !== 'object' || a === null || typeof a.type !== 'string' || typeof a.value !== 'string')
        throw nameRejected('each name attribute needs a string type and value');
      if (++attributes > NAME_LIMITS.maxAttributes)
        throw nameRejected(`a distinguished name with more than ${NAME_LIMITS.maxAttributes} attributes`);
    }
    return rdn;
  });
}

/** DER encoding of a Name. */
export function encodeName(name: DistinguishedName): Buffer {
  const rdns = typeof name === 'string' ? parseDistinguishedName(name) : rdnsOf(name);
  return sequenceOf(
    rdns.map((rdn) =>
      setOfList(
        rdn.map((a) => {
          if (a.value.length > NAME_LIMITS.maxValueLength)
            throw nameRejected(`a name attribute value longer than ${NAME_LIMITS.maxValueLength} characters`);
          const attrOid = attributeOid(a.type);
          return sequenceOf([oid(attrOid), encodeValue(attrOid, a.value)]);
        }),
      ),
    ),
  );
}

/** A decoded name: the exact DER bytes, the RDNs in DER order, and the RFC 4514 text. */
export interface DecodedName {
  der: Uint8Array;
  rdns: { oid: string; type: string; value: string }[][];
  text: string;
}

function escapeValue(v: string): string {
  let s = v.replace(/[\\,+"<>;=]/g, (c) => `\\${c}`);
  if (s.startsWith(' ') || s.startsWith('#')) s = `\\${s}`;
  if (s.endsWith(' ') && s.length > 1) s = `${s.slice(0, -1)}\\ `;
  return s;
}

/** Formats RDNs (DER order) as an RFC 4514 string (most specific first). */
export function formatName(rdns: DecodedName['rdns']): string {
  return [...rdns]
    .reverse()
    .map((rdn) => rdn.map((a) => `${a.type}=${escapeValue(a.value)}`).join('+'))
    .join(',');
}

/** Decodes a Name node. */
export function decodeName(buf: Uint8Array, node: DerNode | undefined, field = 'name'): DecodedName {
  const n = expectTag(node, Tag.SEQUENCE, field);
  const rdns = children(buf, n).map((rdn) => {
    expectTag(rdn, Tag.SET, field);
    return children(buf, rdn).map((atv) => {
      const [typeNode, valueNode] = children(buf, expectTag(atv, Tag.SEQUENCE, field));
      const attrOid = readOid(buf, typeNode, field);
      return {
        oid: attrOid,
        type: SHORT_NAMES[attrOid] ?? attrOid,
        value: readString(buf, valueNode, field),
      };
    });
  });
  return { der: raw(buf, n), rdns, text: formatName(rdns) };
}
