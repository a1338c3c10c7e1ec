import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  certificateToPem,
  createSelfSignedCertificate,
  exportPkcs8Pem,
  generateKeyPair,
  importPkcs8Pem,
  issueCertificate,
  prepareIssuer,
  readCertificate,
} from '@certwright/core/pki';

/**
 * Development bootstrap for the quick start: a local CA, a localhost server certificate and
 * an admin API key under the data directory. Production deployments bring their own TLS
 * files and secret; this exists so that a first run needs nothing.
 */
export interface BootstrapFiles {
  caCertPath: string;
  serverCertPath: string;
  serverKeyPath: string;
}

const DAY = 86_400_000;

export async function ensureBootstrapTls(dir: string, now = new Date()): Promise<BootstrapFiles> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const paths = {
    caCertPath: join(dir, 'ca.pem'),
    caKeyPath: join(dir, 'ca-key.pem'),
    serverCertPath: join(dir, 'server.pem'),
    serverKeyPath: join(dir, 'server-key.pem'),
  };
  let caPem = await readOptional(paths.caCertPath);
  let caKeyPem = await readOptional(paths.caKeyPath);
  if (!caPem || !caKeyPem) {
    const key = await generateKeyPair('ECDSA-P256');
    const ca = createSelfSignedCertificate(
      {
        subject: 'CN=certwright bootstrap CA,O=certwright development',
        notBefore: new Date(now.getTime() - 60_000),
        notAfter: new Date(now.getTime() + 3650 * DAY),
        basicConstraints: { ca: true, pathLength: 0 },
      },
      key.privateKey,
    );
    caPem = certificateToPem(ca.der);
    caKeyPem = exportPkcs8Pem(key.privateKey);
    await writeSecret(paths.caKeyPath, caKeyPem);
    await writeFile(paths.caCertPath, caPem);
  }
  const current = await readOptional(paths.serverCertPath);
  const renewBefore = now.getTime() + 30 * DAY;
  if (!current || readCertificate(current).notAfter.getTime() < renewBefore) {
    const authority = prepareIssuer(caPem, importPkcs8Pem(caKeyPem));
    const key = await generateKeyPair('ECDSA-P256');
    const leaf = issueCertificate(
      {
        subject: 'CN=localhost',
        publicKey: key.publicKey,
        notBefore: new Date(now.getTime() - 60_000),
        notAfter: new Date(now.getTime() + 397 * DAY),
        subjectAltNames: [
          { type: 'dns', value: 'localhost' },
          { type: 'ip', value: '127.0.0.1' },
          { type: 'ip', value: '::1' },
        ],
        extendedKeyUsage: ['serverAuth'],
      },
      authority,
    );
    await writeSecret(paths.serverKeyPath, exportPkcs8Pem(key.privateKey));
    await writeFile(paths.serverCertPath, certificateToPem(leaf.der));
  }
  return {
    caCertPath: paths.caCertPath,
    serverCertPath: paths.serverCertPath,
    serverKeyPath: paths.serverKeyPath,
  };
}

/** The admin API key, created once (256 random bits) and kept readable by the owner only. */
export async function ensureAdminKey(path: string): Promise<string> {
  const existing = (await readOptional(path))?.trim();
  if (existing) return existing;
  const key = `cwk_${randomBytes(32).toString('base64url')}`;
  await writeSecret(path, `${key}\n`);
  return key;
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function writeSecret(path: string, content: string): Promise<void> {
  await writeFile(path, content, { mode: 0o600 });
  await chmod(path, 0o600);
}
