/**
 * `openssl x509 -noout -text -nameopt RFC2253 -fingerprint -sha256` (and `-sha1`) output read
 * into fields, so tests can hold a decoded view — the API's or the console's — against what
 * OpenSSL itself reads from the same certificate.
 */
export interface OpensslCertificate {
  version: number;
  /** Lower-case hex without leading zeros (the API's form). */
  serial: string;
  subject: string;
  issuer: string;
  notBefore: Date;
  notAfter: Date;
  signatureAlgorithm: string;
  publicKeyBits: number;
  curve: string | null;
  sha256: string | null;
  sha1: string | null;
  /** As printed: `DNS:a.example`, `IP Address:192.0.2.1`, `email:…`, `URI:…`. */
  sans: string[];
  keyUsage: string[] | null;
  extendedKeyUsage: string[] | null;
  /** `CA:TRUE, pathlen:1`, `CA:FALSE`. */
  basicConstraints: string | null;
  /** Upper-case hex with colons, as printed. */
  subjectKeyIdentifier: string | null;
  authorityKeyIdentifier: string | null;
  crlDistributionPoints: string[];
  ocsp: string[];
  caIssuers: string[];
  policies: string[];
}

/** The labels OpenSSL prints for key usages and extended key usages, by the API's names. */
export const OPENSSL_KEY_USAGE: Record<string, string> = {
  digitalSignature: 'Digital Signature',
  contentCommitment: 'Non Repudiation',
  keyEncipherment: 'Key Encipherment',
  dataEncipherment: 'Data Encipherment',
  keyAgreement: 'Key Agreement',
  keyCertSign: 'Certificate Sign',
  cRLSign: 'CRL Sign',
  encipherOnly: 'Encipher Only',
  decipherOnly: 'Decipher Only',
};
export const OPENSSL_EKU: Record<string, string> = {
  serverAuth: 'TLS Web Server Authentication',
  clientAuth: 'TLS Web Client Authentication',
  codeSigning: 'Code Signing',
  emailProtection: 'E-mail Protection',
  timeStamping: 'Time Stamping',
  OCSPSigning: 'OCSP Signing',
};

/** The lines under an extension's header, up to the next header at its indentation or above. */
function block(lines: string[], header: RegExp): string[] | null {
  const at = lines.findIndex((l) => header.test(l.trim()));
  if (at < 0) return null;
  const indent = lines[at]!.search(/\S/);
  const out: string[] = [];
  for (const line of lines.slice(at + 1)) {
    if (line.trim() === '') continue;
    if (line.search(/\S/) <= indent) break;
    out.push(line.trim());
  }
  return out;
}

const value = (text: string, label: RegExp): string | null => {
  for (const line of text.split('\n')) {
    const m = label.exec(line.trim());
    if (m) return m[1]!.trim();
  }
  return null;
};

const colonHex = (text: string | null): string | null =>
  text === null ? null : text.replace(/:/g, '').toLowerCase();

export function parseOpensslText(text: string): OpensslCertificate {
  const lines = text.split('\n');
  const serialLine = lines.findIndex((l) => l.trim().startsWith('Serial Number:'));
  const inline = /Serial Number: \d+ \(0x([0-9a-f]+)\)/i.exec(lines[serialLine] ?? '');
  const serial = (inline ? inline[1]! : (lines[serialLine + 1] ?? '').trim().replace(/:/g, ''))
    .toLowerCase()
    .replace(/^0+(?=.)/, '');
  const list = (header: RegExp) => (block(lines, header) ?? []).join(', ').split(/,\s*/).filter(Boolean);
  const optionalList = (header: RegExp) => (block(lines, header) ? list(header) : null);
  const aia = block(lines, /^Authority Information Access:/) ?? [];
  const fingerprint = (name: string) => colonHex(value(text, new RegExp(`^${name} Fingerprint=(.+)$`, 'i')));
  return {
    version: Number(value(text, /^Version: (\d+)/)),
    serial,
    subject: value(text, /^Subject: (.*)$/) ?? '',
    issuer: value(text, /^Issuer: (.*)$/) ?? '',
    notBefore: new Date(value(text, /^Not Before: (.+)$/) ?? ''),
    notAfter: new Date(value(text, /^Not After : (.+)$/) ?? ''),
    signatureAlgorithm: value(text, /^Signature Algorithm: (.+)$/) ?? '',
    publicKeyBits: Number(
      value(text, /Public-Key: \((\d+) bit\)/) ?? value(text, /^ED\d+ Public-Key:()/) ?? 0,
    ),
    curve: value(text, /^NIST CURVE: (.+)$/),
    sha256: fingerprint('sha256'),
    sha1: fingerprint('sha1'),
    sans: list(/^X509v3 Subject Alternative Name:/),
    keyUsage: optionalList(/^X509v3 Key Usage:/),
    extendedKeyUsage: optionalList(/^X509v3 Extended Key Usage:/),
    basicConstraints: (block(lines, /^X509v3 Basic Constraints:/) ?? [null])[0] ?? null,
    subjectKeyIdentifier: (block(lines, /^X509v3 Subject Key Identifier:/) ?? [null])[0] ?? null,
    authorityKeyIdentifier:
      (block(lines, /^X509v3 Authority Key Identifier:/) ?? [null])[0]?.replace(/^keyid:/, '') ?? null,
    crlDistributionPoints: (block(lines, /^X509v3 CRL Distribution Points:/) ?? [])
      .filter((l) => l.startsWith('URI:'))
      .map((l) => l.slice(4)),
    ocsp: aia.filter((l) => l.startsWith('OCSP - URI:')).map((l) => l.slice('OCSP - URI:'.length)),
    caIssuers: aia
      .filter((l) => l.startsWith('CA Issuers - URI:'))
      .map((l) => l.slice('CA Issuers - URI:'.length)),
    policies: (block(lines, /^X509v3 Certificate Policies:/) ?? [])
      .filter((l) => l.startsWith('Policy: '))
      .map((l) => l.slice('Policy: '.length)),
  };
}
