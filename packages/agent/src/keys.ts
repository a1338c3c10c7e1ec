import { createHash, createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  certificationRequestToPem,
  createCertificationRequest,
  exportPkcs8Pem,
  exportSpkiDer,
  generateKeyPair,
  type KeyAlgorithm,
} from '@certwright/core/pki';
import { writeFileAtomic } from './files.js';

/** Hex SHA-256 of a SubjectPublicKeyInfo: how a key is found again for its certificate. */
const spkiId = (spki: Uint8Array): string => createHash('sha256').update(spki).digest('hex');

/**
 * Private keys the agent generated for its AwaitingCSR jobs. Each key is written 0600 under
 * `dir` (itself 0700) before its CSR leaves the host, named by the hash of its public key, so
 * the certificate that comes back (with no key, since the server never had it) finds its key.
 * Only the CSR is ever sent.
 */
export class AgentKeyStore {
  constructor(
    readonly dir: string,
    readonly algorithm: KeyAlgorithm = 'ECDSA-P256',
  ) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  /** Generates and stores a key, and returns the PEM CSR for it. */
  async createCsr(commonName: string): Promise<{ csrPem: string; keyId: string }> {
    const { privateKey } = await generateKeyPair(this.algorithm);
    const keyId = spkiId(exportSpkiDer(privateKey));
    writeFileAtomic(join(this.dir, `${keyId}.key`), exportPkcs8Pem(privateKey), { mode: 0o600 });
    const der = createCertificationRequest({ subject: [{ type: 'CN', value: commonName }], privateKey });
    return { csrPem: certificationRequestToPem(der), keyId };
  }

  /** The stored private key (PEM) whose public key the certificate carries, if this host made it. */
  keyForCertificate(certPem: string): string | null {
    const cert = new X509Certificate(certPem);
    const id = spkiId(cert.publicKey.export({ type: 'spki', format: 'der' }));
    try {
      return readFileSync(join(this.dir, `${id}.key`), 'utf8');
    } catch {
      return null;
    }
  }

  /** Number of keys held (for status reports; never their content). */
  count(): number {
    return readdirSync(this.dir).filter((f) => f.endsWith('.key')).length;
  }

  static load(pem: string): KeyObject {
    return createPrivateKey(pem);
  }
}
