import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@certwright/core';
import {
  certificateToPem,
  createSelfSignedCertificate,
  exportPkcs8Pem,
  exportSpkiDer,
  generateKeyPair,
  importPkcs8Pem,
  issueCertificate,
  nameConstraintsExtension,
  OID,
  prepareIssuer,
  readCertificate,
} from '@certwright/core/pki';
import { readOptionalFile, readOrCreateFile, replaceFile } from './secret-file.js';

/**
 * Development bootstrap for the quick start: a local CA, a localhost server certificate and
 * an admin API key under the data directory. Production deployments bring their own TLS
 * files and secret; this exists so that a first run needs nothing.
 *
 * The CA is name-constrained (critical; RFC 5280 §4.2.1.10) to `localhost`, 127.0.0.1 and ::1:
 * whoever trusts it cannot be shown a certificate it signed for any other name. Every secret is
 * created mode 0600 before any byte is written, and instances started at once agree on one set
 * of files (the first to create a file wins; see secret-file.ts).
 */
export interface BootstrapFiles {
  caCertPath: string;
  serverCertPath: string;
  serverKeyPath: string;
}

const DAY = 86_400_000;

/** The only names the bootstrap CA may certify. */
export const BOOTSTRAP_PERMITTED_NAMES = [
  { type: 'dns', value: 'localhost' },
  { type: 'ip', value: '127.0.0.1/32' },
  { type: 'ip', value: '::1/128' },
] as const;

export async function ensureBootstrapTls(
  dir: string,
  options: { now?: Date; logger?: Pick<Logger, 'warn'> } = {},
): Promise<BootstrapFiles> {
  const now = options.now ?? new Date();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const paths = {
    caCertPath: join(dir, 'ca.pem'),
    caKeyPath: join(dir, 'ca-key.pem'),
    serverCertPath: join(dir, 'server.pem'),
    serverKeyPath: join(dir, 'server-key.pem'),
  };

  // The key files anchor everything: a certificate can be made again from its key by whichever
  // instance needs it, so a process that lost a race on the key adopts the winner's key.
  const caKeyPem = (
    await readOrCreateFile(paths.caKeyPath, async () =>
      exportPkcs8Pem((await generateKeyPair('ECDSA-P256')).privateKey),
    )
  ).content;
  const caKey = importPkcs8Pem(caKeyPem);
  const caPem = (
    await readOrCreateFile(
      paths.caCertPath,
      () =>
        certificateToPem(
          createSelfSignedCertificate(
            {
              subject: 'CN=certwright bootstrap CA,O=certwright development',
              notBefore: new Date(now.getTime() - 60_000),
              notAfter: new Date(now.getTime() + 3650 * DAY),
              basicConstraints: { ca: true, pathLength: 0 },
              extraExtensions: [nameConstraintsExtension({ permitted: BOOTSTRAP_PERMITTED_NAMES })],
            },
            caKey,
          ).der,
        ),
      0o644,
    )
  ).content;
  const ca = readCertificate(caPem);
  if (!ca.extensions.some((e) => e.oid === OID.nameConstraints)) {
    options.logger?.warn(
      { path: paths.caCertPath },
      'the development CA has no name constraints (made by an older version): whoever trusts it can be ' +
        `shown a certificate for any name. Delete ${dir} to make a constrained one, and remove the old CA ` +
        'from every trust store it was added to.',
    );
  }

  const serverKeyPem = (
    await readOrCreateFile(paths.serverKeyPath, async () =>
      exportPkcs8Pem((await generateKeyPair('ECDSA-P256')).privateKey),
    )
  ).content;
  const serverKey = importPkcs8Pem(serverKeyPem);
  const current = await readOptionalFile(paths.serverCertPath);
  const renewBefore = now.getTime() + 30 * DAY;
  const spki = exportSpkiDer(serverKey);
  const usable = (pem: string) => {
    const cert = readCertificate(pem);
    return cert.notAfter.getTime() >= renewBefore && Buffer.from(cert.spki).equals(spki);
  };
  if (!current || !usable(current)) {
    // Renewal keeps the key, so a certificate written by a concurrent instance always matches it.
    const leaf = issueCertificate(
      {
        subject: 'CN=localhost',
        publicKey: spki,
        notBefore: new Date(now.getTime() - 60_000),
        notAfter: new Date(Math.min(now.getTime() + 397 * DAY, ca.notAfter.getTime())),
        subjectAltNames: [
          { type: 'dns', value: 'localhost' },
          { type: 'ip', value: '127.0.0.1' },
          { type: 'ip', value: '::1' },
        ],
        extendedKeyUsage: ['serverAuth'],
      },
      prepareIssuer(ca, caKey),
    );
    await replaceFile(paths.serverCertPath, certificateToPem(leaf.der), 0o644);
  }
  return {
    caCertPath: paths.caCertPath,
    serverCertPath: paths.serverCertPath,
    serverKeyPath: paths.serverKeyPath,
  };
}

/** The admin API key, created once (256 random bits) and kept readable by the owner only. */
export async function ensureAdminKey(path: string): Promise<string> {
  const { content } = await readOrCreateFile(path, () => `cwk_${randomBytes(32).toString('base64url')}\n`);
  return content.trim();
}
