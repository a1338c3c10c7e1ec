import { fail, isCertwrightError } from '@certwright/core';
import type { OutboundClient } from '@certwright/core/net';
import {
  type CertificateInfo,
  decodeSubjectAltName,
  ipToBytes,
  OID,
  readCertificate,
} from '@certwright/core/pki';
import type { Budget } from './budget.js';
import { type Subject, subjectText, type VettedChallenge } from './challenge.js';
import { ACME_IDENTIFIER_OID, acmeIdentifierExtension, keyAuthorizationDigest } from './key-authorization.js';
import { reverseDnsName } from './reverse-name.js';
import { shown } from './shown.js';

/** RFC 8737 §6.1. */
export const ACME_TLS_ALPN_PROTOCOL = 'acme-tls/1';

export interface TlsAlpn01Settings {
  client: OutboundClient;
  tlsAlpnPort: number;
}

/** SNI: the dns identifier, or for an IP identifier its reverse-mapping name (RFC 8738 §6). */
export const tlsAlpn01ServerName = (subject: Subject): string =>
  subject.type === 'dns' ? subject.name : reverseDnsName(subject.address);

/**
 * RFC 8737 §3: a TLS handshake on the identifier's checked address with SNI and ALPN
 * `acme-tls/1` only; the chain is not validated (the certificate is self-signed by design),
 * the leaf is read with our own bounded parser and must carry exactly the identifier and the
 * key authorization's digest.
 */
export async function validateTlsAlpn01(
  challenge: VettedChallenge,
  settings: TlsAlpn01Settings,
  budget: Budget,
): Promise<void> {
  const { subject } = challenge;
  const host = subject.type === 'dns' ? subject.name : subject.text;
  const port = settings.tlsAlpnPort;
  const result = await settings.client
    .connectTls({
      host,
      port,
      servername: tlsAlpn01ServerName(subject),
      alpn: [ACME_TLS_ALPN_PROTOCOL],
      verify: false,
      timeoutMs: budget.remainingMs(),
      field: 'identifier',
    })
    .catch((error: unknown) => {
      throw isCertwrightError(error)
        ? error.reason === 'invalid_input'
          ? fail('connection_failed', error.message, { cause: error })
          : error
        : fail('tls_failed', `TLS handshake with '${host}' port ${port} failed`, { cause: error });
    });
  if (result.protocol === 'TLSv1' || result.protocol === 'TLSv1.1' || result.protocol === 'SSLv3') {
    // RFC 8737 §4: validation handshakes are TLS 1.2 or later (Node's default minimum, unless
    // the process was started with an older one).
    throw fail(
      'tls_failed',
      `'${host}' port ${port} negotiated ${result.protocol}; tls-alpn-01 needs TLS 1.2 or later`,
    );
  }
  if (result.alpnProtocol !== ACME_TLS_ALPN_PROTOCOL) {
    throw fail(
      'tls_failed',
      `'${host}' port ${port} did not negotiate the ALPN protocol ${ACME_TLS_ALPN_PROTOCOL} (it selected ${result.alpnProtocol === null ? 'none' : `'${shown(result.alpnProtocol)}'`})`,
    );
  }
  const leaf = result.peerCertificates[0];
  if (!leaf) throw fail('tls_failed', `'${host}' port ${port} presented no certificate`);
  checkAcmeTlsCertificate(leaf, challenge);
}

const expectedSan = (subject: Subject): string =>
  subject.type === 'dns' ? `dNSName '${subject.name}'` : `iPAddress ${subject.text}`;

/**
 * The certificate checks of RFC 8737 §3 over untrusted bytes: `tls_failed` when the leaf cannot
 * be read, `incorrect_response` when it does not carry exactly one subjectAltName equal to the
 * identifier and a critical acmeIdentifier extension whose value is the OCTET STRING of
 * SHA-256(key authorization).
 */
export function checkAcmeTlsCertificate(der: Uint8Array, challenge: VettedChallenge): void {
  const { subject } = challenge;
  const what = `the certificate presented for '${subjectText(subject)}'`;
  let info: CertificateInfo;
  let sans: ReturnType<typeof decodeSubjectAltName> = [];
  try {
    info = readCertificate(der);
    const sanExtension = info.extensions.find((e) => e.oid === OID.subjectAltName);
    if (sanExtension) sans = decodeSubjectAltName(sanExtension.value);
  } catch (error) {
    const why = isCertwrightError(error) ? shown(error.message, 200) : 'malformed';
    throw fail('tls_failed', `${what} cannot be read: ${why}`, { cause: error });
  }
  const san = sans.length === 1 ? sans[0]! : undefined;
  const sanMatches =
    san !== undefined &&
    (subject.type === 'dns'
      ? san.type === 'dns' && san.value.toLowerCase() === subject.name
      : san.type === 'ip' && ipToBytes(san.value).equals(ipToBytes(subject.text)));
  if (!sanMatches) {
    const found = sans.length === 0 ? 'none' : sans.slice(0, 5).map(describeSan).join(', ');
    throw fail(
      'incorrect_response',
      `${what} must have exactly one subjectAltName, ${expectedSan(subject)}; it has ${found}${sans.length > 5 ? ', …' : ''}`,
    );
  }
  const acme = info.extensions.find((e) => e.oid === ACME_IDENTIFIER_OID);
  if (!acme) {
    throw fail('incorrect_response', `${what} has no acmeIdentifier extension (${ACME_IDENTIFIER_OID})`);
  }
  if (!acme.critical) {
    throw fail('incorrect_response', `${what} has an acmeIdentifier extension that is not marked critical`);
  }
  // The whole DER value is compared (OCTET STRING, length 32, the digest): other lengths, other
  // tags and non-minimal length encodings are refused at once.
  const expected = acmeIdentifierExtension(challenge.keyAuthorization).value;
  const digest = keyAuthorizationDigest(challenge.keyAuthorization);
  if (!Buffer.from(expected).equals(acme.value)) {
    throw fail(
      'incorrect_response',
      `${what} has the wrong acmeIdentifier: expected an OCTET STRING of SHA-256(key authorization) = ${digest.toString('hex')}, got ${shown(Buffer.from(acme.value).toString('hex'), 140)}`,
    );
  }
}

function describeSan(san: ReturnType<typeof decodeSubjectAltName>[number]): string {
  switch (san.type) {
    case 'dns':
      return `dNSName '${shown(san.value)}'`;
    case 'ip':
      return `iPAddress ${shown(san.value)}`;
    case 'email':
      return `rfc822Name '${shown(san.value)}'`;
    case 'uri':
      return `URI '${shown(san.value)}'`;
    default:
      return `a name of tag 0x${san.tag.toString(16)}`;
  }
}
