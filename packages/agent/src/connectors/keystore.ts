import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { exportPkcs12, pemDecodeCertificates } from '@certwright/core/pki';
import {
  type ConnectorTarget,
  type DeploymentConnector,
  DeploymentError,
  type DeploymentMaterial,
  type DeploymentOutcome,
  type VerificationOutcome,
} from '../connector.js';
import { BACKUP_SUFFIX, backupFile, checkAllowedPath, restoreBackup, writeFileAtomic } from '../files.js';
import { type Endpoint, fingerprint256, verifyEndpoint } from '../verify.js';
import { runCommand } from './command.js';

/** The host's rules for keystores: where they may be written and what reloads the application. */
export interface KeystoreOptions {
  allowedDirs: readonly string[];
  /** argv that makes the application reread the keystore (optional: many reread on their own). */
  reloadCommand?: readonly string[];
  /** Check the written file with `keytool -list` (needs a JDK or JRE on the host). Default true. */
  checkWithKeytool?: boolean;
}

/** Passed to keytool through the environment, never on its command line (visible in ps). */
const PASSWORD_VARIABLE = 'CERTWRIGHT_KEYSTORE_PASSWORD';

/**
 * Java applications (Tomcat, Jetty, Kafka, Spring Boot …): a PKCS#12 keystore — the default
 * keystore type since Java 9, read by `keytool` and every JDK — with the key, the leaf and the
 * chain under one alias. Target config: `keystore_path`, `password` (at least 8 characters;
 * the target config is stored sealed), optional `alias`, `mode` (default 0600), `uid`, `gid`,
 * and `verify_port`/`verify_host`/`verify_server_name` to check the served certificate.
 */
export class JavaKeystoreConnector implements DeploymentConnector {
  readonly type = 'JavaKeystore';

  constructor(readonly options: KeystoreOptions) {}

  #config(target: ConnectorTarget) {
    const c = target.config;
    if (typeof c.keystore_path !== 'string')
      throw new DeploymentError('target config keystore_path is required');
    let path: string;
    try {
      path = checkAllowedPath(c.keystore_path, this.options.allowedDirs, 'keystore_path');
    } catch (error) {
      throw new DeploymentError(`target config ${(error as Error).message}`);
    }
    if (typeof c.password !== 'string' || [...c.password].length < 8) {
      throw new DeploymentError('target config password must be at least 8 characters');
    }
    const alias = typeof c.alias === 'string' && c.alias.length > 0 ? c.alias : 'certwright';
    const mode =
      typeof c.mode === 'string' && /^0?[0-7]{3}$/.test(c.mode) ? Number.parseInt(c.mode, 8) : 0o600;
    const ids = {
      ...(Number.isInteger(c.uid) ? { uid: c.uid as number } : {}),
      ...(Number.isInteger(c.gid) ? { gid: c.gid as number } : {}),
    };
    const verify: Endpoint | undefined =
      typeof c.verify_port === 'number'
        ? {
            host: typeof c.verify_host === 'string' ? c.verify_host : '127.0.0.1',
            port: c.verify_port,
            ...(typeof c.verify_server_name === 'string' ? { serverName: c.verify_server_name } : {}),
          }
        : undefined;
    return { path, password: c.password, alias, own: { mode, ...ids }, verify };
  }

  async deploy(target: ConnectorTarget, m: DeploymentMaterial): Promise<DeploymentOutcome> {
    const cfg = this.#config(target);
    let der: Buffer;
    try {
      const cert = new X509Certificate(m.certPem);
      const key = createPrivateKey(m.privateKeyPem);
      if (!cert.checkPrivateKey(key))
        throw new DeploymentError('the private key does not match the certificate');
      const chain = m.chainPem ? pemDecodeCertificates(m.chainPem) : [];
      der = exportPkcs12({
        privateKey: key,
        certificate: cert.raw,
        chain,
        password: cfg.password,
        friendlyName: cfg.alias,
      });
    } catch (error) {
      if (error instanceof DeploymentError) throw error;
      throw new DeploymentError('the certificate or key to deploy does not parse');
    }
    const had = backupFile(cfg.path);
    const undo = async (reason: string): Promise<never> => {
      restoreBackup(cfg.path, had);
      if (this.options.reloadCommand) await runCommand(this.options.reloadCommand).catch(() => undefined);
      throw new DeploymentError(`${reason}; the previous keystore was restored`);
    };
    try {
      writeFileAtomic(cfg.path, der, cfg.own);
    } catch (error) {
      return undo(
        `writing the keystore failed: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
    try {
      await this.validate(target);
    } catch (error) {
      return undo(`validation failed: ${(error as Error).message}`);
    }
    if (this.options.reloadCommand) {
      try {
        await runCommand(this.options.reloadCommand);
      } catch (error) {
        return undo(`reload failed: ${(error as Error).message}`);
      }
    }
    const fp = fingerprint256(m.certPem);
    let verification: VerificationOutcome | undefined;
    if (cfg.verify) {
      verification = await verifyEndpoint(cfg.verify, fp);
      if (!verification.ok) return undo(`verification failed: ${verification.detail}`);
    }
    return { fingerprint256: fp, files: [cfg.path], ...(verification ? { verification } : {}) };
  }

  /** `keytool -list` must open the keystore with its password and find the alias. */
  async validate(target: ConnectorTarget): Promise<void> {
    if (this.options.checkWithKeytool === false) return;
    const cfg = this.#config(target);
    await runCommand(
      [
        'keytool',
        '-list',
        '-keystore',
        cfg.path,
        '-storetype',
        'PKCS12',
        '-storepass:env',
        PASSWORD_VARIABLE,
        '-alias',
        cfg.alias,
      ],
      60_000,
      { [PASSWORD_VARIABLE]: cfg.password },
    );
  }

  async rollback(target: ConnectorTarget): Promise<void> {
    const cfg = this.#config(target);
    restoreBackup(cfg.path, true);
    if (this.options.reloadCommand) await runCommand(this.options.reloadCommand);
  }

  async testConnection(target: ConnectorTarget): Promise<Record<string, unknown>> {
    const cfg = this.#config(target);
    return { keystore_path: cfg.path, alias: cfg.alias, backup: `${cfg.path}${BACKUP_SUFFIX}` };
  }

  async verify(
    target: ConnectorTarget,
    expected?: { fingerprint256?: string },
  ): Promise<VerificationOutcome> {
    const cfg = this.#config(target);
    if (!cfg.verify) {
      // Without an endpoint, the keystore itself is what is checked.
      await this.validate(target);
      return { ok: true, detail: `${cfg.path} opens and holds alias ${cfg.alias}` };
    }
    if (!expected?.fingerprint256) {
      readFileSync(cfg.path);
      throw new DeploymentError('no deployed fingerprint known to compare with (the agent restarted since)');
    }
    return verifyEndpoint(cfg.verify, expected.fingerprint256);
  }
}
