import { createHash, X509Certificate } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A certificate found on the host, as reported to the server's discovery API. */
export interface DiscoveredCertificate {
  path: string;
  fingerprint_sha256: string;
  serial_number: string;
  subject: string;
  issuer: string;
  not_before: string;
  not_after: string;
  subject_alt_names: string[];
  /** The certificate itself as PEM (public; what the server records and fingerprints). */
  pem: string;
}

/**
 * Where discovered certificates go. The server's discovery routes implement it through
 * HTTPS; an embedder can send them anywhere else. The agent calls it after each scan.
 */
export interface DiscoveryReporter {
  report(agentId: string, found: readonly DiscoveredCertificate[]): Promise<void>;
}

/** Files larger than this are not certificates worth reading. */
const MAX_FILE = 1024 * 1024;
/** Directory depth and file count bounds, so a scan of `/` ends. */
const MAX_DEPTH = 8;
const MAX_FILES = 20_000;
const CERT_EXTENSIONS = /\.(pem|crt|cer|cert|der)$/i;
const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * Walks the configured paths (no symlinks followed) and reads every certificate in files with a
 * certificate extension: each PEM block, or the file as DER. Keys and anything unparsable are
 * skipped; nothing but certificates is read into the result.
 */
export function scanForCertificates(paths: readonly string[]): DiscoveredCertificate[] {
  const found = new Map<string, DiscoveredCertificate>();
  let files = 0;
  const visit = (path: string, depth: number) => {
    if (files >= MAX_FILES || depth > MAX_DEPTH) return;
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(path);
    } catch {
      return;
    }
    if (st.isSymbolicLink()) return;
    if (st.isDirectory()) {
      let entries: string[];
      try {
        entries = readdirSync(path).sort();
      } catch {
        return;
      }
      for (const e of entries) visit(join(path, e), depth + 1);
      return;
    }
    if (!st.isFile() || st.size > MAX_FILE || !CERT_EXTENSIONS.test(path)) return;
    files += 1;
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch {
      return;
    }
    const text = bytes.toString('latin1');
    const blocks = text.includes('-----BEGIN CERTIFICATE-----') ? (text.match(PEM_BLOCK) ?? []) : [bytes];
    for (const block of blocks) {
      try {
        const cert = new X509Certificate(block);
        const fp = createHash('sha256').update(cert.raw).digest('hex');
        const key = `${path}\u0000${fp}`;
        if (found.has(key)) continue;
        found.set(key, {
          path,
          fingerprint_sha256: fp,
          serial_number: cert.serialNumber,
          subject: cert.subject.replace(/\n/g, ', '),
          issuer: cert.issuer.replace(/\n/g, ', '),
          not_before: new Date(cert.validFrom).toISOString(),
          not_after: new Date(cert.validTo).toISOString(),
          subject_alt_names: (cert.subjectAltName ?? '').split(', ').filter(Boolean),
          pem: cert.toString(),
        });
      } catch {
        // not a certificate
      }
    }
  };
  for (const p of paths) visit(p, 0);
  return [...found.values()];
}
