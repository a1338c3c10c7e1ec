import { accessSync, constants, existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  BACKUP_SUFFIX,
  type ConnectorTarget,
  type DeploymentConnector,
  DeploymentError,
  type DeploymentMaterial,
  fingerprint256,
  writeFileAtomic,
} from '@certwright/agent';

/**
 * Traefik's file provider watches a directory of dynamic configuration: this connector writes
 * the certificate and key next to a `certwright-<target>.yml` that names them, and Traefik
 * picks the change up by itself — no reload command. The directory is the host's choice
 * (constructor), the target only names a file stem inside it.
 */
export class TraefikFileConnector implements DeploymentConnector {
  readonly type = 'Traefik';

  constructor(readonly directory: string) {}

  #paths(target: ConnectorTarget) {
    const stem = typeof target.config.name === 'string' ? target.config.name : target.id;
    // Only a plain file stem: a target config must not reach outside the directory.
    if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(stem))
      throw new DeploymentError('target config name must be a short lowercase stem');
    const base = join(this.directory, stem);
    return {
      cert: `${base}.crt`,
      key: `${base}.key`,
      dynamic: join(this.directory, `certwright-${stem}.yml`),
    };
  }

  async deploy(target: ConnectorTarget, m: DeploymentMaterial) {
    const p = this.#paths(target);
    const files: [string, string, number][] = [
      [p.key, m.privateKeyPem, 0o600],
      [p.cert, m.certPem + (m.chainPem ?? ''), 0o644],
      [p.dynamic, `tls:\n  certificates:\n    - certFile: ${p.cert}\n      keyFile: ${p.key}\n`, 0o644],
    ];
    const previous = files.map(([path]) => (existsSync(path) ? readFileSync(path) : null));
    try {
      for (const [path, content, mode] of files) {
        if (existsSync(path)) writeFileAtomic(path + BACKUP_SUFFIX, readFileSync(path), { mode });
        writeFileAtomic(path, content, { mode });
      }
      await this.validate(target);
    } catch (error) {
      for (const [i, [path, , mode]] of files.entries()) {
        const old = previous[i];
        if (old) writeFileAtomic(path, old, { mode });
        else rmSync(path, { force: true });
      }
      throw new DeploymentError(
        `deploying to Traefik failed: ${(error as Error).message}; the previous files were restored`,
      );
    }
    return { fingerprint256: fingerprint256(m.certPem), files: files.map(([path]) => path) };
  }

  /** Traefik has no offline check; the written pair must at least belong together. */
  async validate(target: ConnectorTarget) {
    const p = this.#paths(target);
    const { X509Certificate, createPrivateKey } = await import('node:crypto');
    const cert = new X509Certificate(readFileSync(p.cert));
    if (!cert.checkPrivateKey(createPrivateKey(readFileSync(p.key))))
      throw new Error('key and certificate differ');
  }

  async rollback(target: ConnectorTarget) {
    const p = this.#paths(target);
    for (const path of [p.key, p.cert, p.dynamic]) {
      if (existsSync(path + BACKUP_SUFFIX))
        writeFileAtomic(path, readFileSync(path + BACKUP_SUFFIX), { mode: 0o600 });
    }
  }

  async testConnection(target: ConnectorTarget) {
    this.#paths(target);
    accessSync(this.directory, constants.W_OK);
    return { directory: this.directory, writable: true };
  }

  /** Without a Traefik here, verification compares the file Traefik reads. */
  async verify(target: ConnectorTarget, expected?: { fingerprint256?: string }) {
    const found = fingerprint256(readFileSync(this.#paths(target).cert, 'utf8'));
    const ok = !expected?.fingerprint256 || expected.fingerprint256 === found;
    return {
      ok,
      detail: ok ? 'the file provider holds the deployed certificate' : 'another certificate is in place',
    };
  }
}
