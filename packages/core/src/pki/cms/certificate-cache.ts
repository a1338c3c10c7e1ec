import type { KeyObject } from 'node:crypto';
import { type CertificateInfo, readCertificate } from '../certificate-info.js';
import { importSpkiDer } from '../keys.js';

/**
 * One CMS message names the same certificate several times — a SCEP request's signer
 * certificate is matched against the SignerInfo, verified against, matched against the
 * recipient of the reply and written into it; the RA certificate is matched and written on
 * every request — and each reading parses the whole certificate, each key import runs OpenSSL's
 * decoder. This remembers both per certificate buffer: keyed by the buffer object (a
 * WeakMap, so nothing outlives its buffer) and checked against a copy of the bytes, so a buffer
 * altered in place is read again rather than answered from the memory.
 */

interface Entry {
  bytes: Buffer;
  info: CertificateInfo;
  key?: KeyObject;
}

const entries = new WeakMap<Uint8Array, Entry>();

function entryOf(der: Uint8Array): Entry {
  const cached = entries.get(der);
  if (cached && cached.bytes.length === der.length && cached.bytes.equals(der)) return cached;
  const info = readCertificate(der); // throws for what is not a bounded certificate: not remembered
  const entry: Entry = { bytes: Buffer.from(der), info };
  entries.set(der, entry);
  return entry;
}

/** readCertificate, remembered per buffer. */
export const certificateInfo = (der: Uint8Array): CertificateInfo => entryOf(der).info;

/** The certificate's subject public key as a KeyObject (key checks as importSpkiDer), remembered per buffer. */
export function certificatePublicKey(der: Uint8Array): KeyObject {
  const entry = entryOf(der);
  entry.key ??= importSpkiDer(entry.info.spki);
  return entry.key;
}
