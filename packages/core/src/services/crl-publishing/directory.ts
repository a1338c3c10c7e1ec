import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { crlToPem } from '../../pki/crl.js';
import type { CrlPublication, CrlPublisher } from '../../ports/crl-publisher.js';

/**
 * Publishes CRLs into a directory, one folder per issuer (`<dir>/<issuer_id>/`):
 * `crl.crl` + `crl.pem` (complete CRL), `delta.crl` + `delta.pem`, and `ca.cer` (the CA
 * certificate). The extensions are the ones web servers' MIME tables map to
 * `application/pkix-crl` and `application/pkix-cert` (RFC 2585). Each file is written to a
 * temporary name in the same folder, flushed, and renamed over the old one: rename is atomic
 * within a file system, so a web server never serves half a CRL.
 */
export class DirectoryCrlPublisher implements CrlPublisher {
  readonly target = 'directory';

  constructor(private readonly directory: string) {}

  async publish(publication: CrlPublication): Promise<void> {
    // Issuer ids are storage ids; refuse anything that could climb out of the folder.
    if (!/^[A-Za-z0-9._-]{1,128}$/.test(publication.issuerId) || publication.issuerId.startsWith('.')) {
      throw new Error('issuer id is not a safe folder name');
    }
    const folder = join(this.directory, publication.issuerId);
    await mkdir(folder, { recursive: true });
    const base = publication.kind === 'crl' ? 'crl' : 'delta';
    await writeAtomically(folder, `${base}.crl`, publication.der);
    await writeAtomically(folder, `${base}.pem`, Buffer.from(crlToPem(publication.der)));
    await writeAtomically(folder, 'ca.cer', publication.caCertificate);
  }
}

async function writeAtomically(folder: string, name: string, bytes: Uint8Array): Promise<void> {
  const temporary = join(folder, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await open(temporary, 'wx', 0o644);
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, join(folder, name));
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
}
