import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  type ConnectorTarget,
  type DeploymentConnector,
  DeploymentError,
  type DeploymentMaterial,
  type DeploymentOutcome,
  type VerificationOutcome,
} from '../connector.js';
import {
  BACKUP_SUFFIX,
  checkAllowedPath,
  type FileOwnership,
  type FileWriter,
  recoverInterrupted,
  restoreBackup,
} from '../files.js';
import type { AgentLogger } from '../logger.js';
import { type Endpoint, fingerprint256, verifyEndpoint } from '../verify.js';
import { runCommand } from './command.js';
import { replaceFiles } from './transaction.js';

/**
 * How a server reads its certificate:
 * - `fullchain`: leaf + chain in `cert_path`, key in `key_path` (NGINX, Caddy files, Traefik);
 * - `separate`: leaf in `cert_path`, chain in `chain_path`, key in `key_path` (Apache);
 * - `combined`: leaf + chain + key in one `cert_path` (HAProxy).
 */
export type FileLayout = 'fullchain' | 'separate' | 'combined';

/**
 * The host's own rules for a connector. They come from the agent's configuration file, never
 * from the server: a target config may choose paths, but only inside `allowedDirs`, and never
 * which commands run.
 */
export interface FileServerOptions {
  allowedDirs: readonly string[];
  /** argv that checks the configuration, e.g. `['nginx', '-t']`. */
  validateCommand: readonly string[];
  /** argv that makes the server load the new files, e.g. `['nginx', '-s', 'reload']`. */
  reloadCommand: readonly string[];
  /** Where recovery from an interrupted deployment is logged. */
  logger?: AgentLogger;
  /** The write call of the atomic writes; tests put a failing one in. */
  writer?: FileWriter;
}

/** Target config keys (set by the operator on the target in certwright). */
interface FileTargetConfig {
  cert_path: string;
  key_path?: string;
  chain_path?: string;
  cert_mode: number;
  key_mode: number;
  uid?: number;
  gid?: number;
  verify?: Endpoint;
}

export const mode = (v: unknown, field: string, fallback: number): number => {
  if (v === undefined) return fallback;
  const n = typeof v === 'string' && /^0?[0-7]{3}$/.test(v) ? Number.parseInt(v, 8) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 0o777) {
    throw new DeploymentError(`target config ${field} must be a file mode such as "0640"`);
  }
  return n;
};

export const id = (v: unknown, field: string): number | undefined => {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
    throw new DeploymentError(`target config ${field} must be a numeric id`);
  }
  return v;
};

export class FileServerConnector implements DeploymentConnector {
  constructor(
    readonly type: string,
    readonly layout: FileLayout,
    readonly options: FileServerOptions,
  ) {}

  #config(target: ConnectorTarget): FileTargetConfig {
    const c = target.config;
    const str = (field: string, required: boolean): string | undefined => {
      const v = c[field];
      if (v === undefined && !required) return undefined;
      if (typeof v !== 'string' || v.length === 0)
        throw new DeploymentError(`target config ${field} is required`);
      return checkAllowedPathSafe(v, this.options.allowedDirs, field);
    };
    const cert_path = str('cert_path', true)!;
    const key_path = str('key_path', this.layout !== 'combined');
    const chain_path = str('chain_path', false);
    let verify: Endpoint | undefined;
    if (c.verify_port !== undefined) {
      const port = c.verify_port;
      if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
        throw new DeploymentError('target config verify_port must be a port number');
      }
      const host = typeof c.verify_host === 'string' ? c.verify_host : '127.0.0.1';
      const starttls = c.verify_starttls;
      if (starttls !== undefined && starttls !== 'smtp') {
        throw new DeploymentError('target config verify_starttls must be "smtp" when set');
      }
      verify = {
        host,
        port,
        ...(typeof c.verify_server_name === 'string' ? { serverName: c.verify_server_name } : {}),
        ...(starttls ? { starttls } : {}),
      };
    }
    return {
      cert_path,
      ...(key_path ? { key_path } : {}),
      ...(chain_path ? { chain_path } : {}),
      cert_mode: mode(c.cert_mode, 'cert_mode', this.layout === 'combined' ? 0o600 : 0o644),
      key_mode: mode(c.key_mode, 'key_mode', 0o600),
      ...(id(c.uid, 'uid') !== undefined ? { uid: id(c.uid, 'uid') } : {}),
      ...(id(c.gid, 'gid') !== undefined ? { gid: id(c.gid, 'gid') } : {}),
      ...(verify ? { verify } : {}),
    };
  }

  /** The files this layout writes and what goes in each. */
  #files(
    cfg: FileTargetConfig,
    m: DeploymentMaterial,
  ): { path: string; content: string; own: FileOwnership }[] {
    const nl = (s: string) => (s.endsWith('\n') ? s : `${s}\n`);
    const chain = m.chainPem ? nl(m.chainPem) : '';
    const owner = {
      ...(cfg.uid !== undefined ? { uid: cfg.uid } : {}),
      ...(cfg.gid !== undefined ? { gid: cfg.gid } : {}),
    };
    const certOwn = { mode: cfg.cert_mode, ...owner };
    const keyOwn = { mode: cfg.key_mode, ...owner };
    switch (this.layout) {
      case 'fullchain':
        return [
          { path: cfg.key_path!, content: nl(m.privateKeyPem), own: keyOwn },
          { path: cfg.cert_path, content: nl(m.certPem) + chain, own: certOwn },
        ];
      case 'separate':
        return [
          { path: cfg.key_path!, content: nl(m.privateKeyPem), own: keyOwn },
          { path: cfg.cert_path, content: nl(m.certPem), own: certOwn },
          ...(cfg.chain_path ? [{ path: cfg.chain_path, content: chain, own: certOwn }] : []),
        ];
      case 'combined':
        return [{ path: cfg.cert_path, content: nl(m.certPem) + chain + nl(m.privateKeyPem), own: certOwn }];
    }
  }

  async deploy(target: ConnectorTarget, material: DeploymentMaterial): Promise<DeploymentOutcome> {
    const cfg = this.#config(target);
    assertKeyMatches(material);
    const files = this.#files(cfg, material);
    const fp = fingerprint256(material.certPem);
    const { validateCommand, reloadCommand } = this.options;
    const verification = await replaceFiles(
      cfg.cert_path,
      files,
      {
        validate: () => runCommand(validateCommand).then(() => undefined),
        activate: () => runCommand(reloadCommand).then(() => undefined),
        confirm: async () => (cfg.verify ? verifyEndpoint(cfg.verify, fp) : undefined),
        afterRestore: () =>
          runCommand(validateCommand).then(() => runCommand(reloadCommand).then(() => undefined)),
      },
      {
        targetId: target.id,
        ...(this.options.logger ? { logger: this.options.logger } : {}),
        ...(this.options.writer ? { writer: this.options.writer } : {}),
      },
    );
    return { fingerprint256: fp, files: files.map((f) => f.path), ...(verification ? { verification } : {}) };
  }

  async validate(_target: ConnectorTarget): Promise<void> {
    await runCommand(this.options.validateCommand);
  }

  async rollback(target: ConnectorTarget): Promise<void> {
    const cfg = this.#config(target);
    if (recoverInterrupted(cfg.cert_path)) {
      await runCommand(this.options.validateCommand);
      await runCommand(this.options.reloadCommand);
      return;
    }
    for (const path of [cfg.key_path, cfg.cert_path, cfg.chain_path]) {
      if (path && existsSync(path + BACKUP_SUFFIX)) restoreBackup(path, true);
    }
    await runCommand(this.options.validateCommand);
    await runCommand(this.options.reloadCommand);
  }

  async testConnection(target: ConnectorTarget): Promise<Record<string, unknown>> {
    const cfg = this.#config(target);
    for (const path of [cfg.cert_path, cfg.key_path, cfg.chain_path]) {
      if (!path) continue;
      try {
        accessSync(dirname(path), constants.W_OK);
      } catch {
        throw new DeploymentError(`the directory of ${path} is not writable by the agent`);
      }
    }
    await runCommand(this.options.validateCommand);
    return { writable: true, configuration_valid: true };
  }

  async verify(
    target: ConnectorTarget,
    expected?: { fingerprint256?: string },
  ): Promise<VerificationOutcome> {
    const cfg = this.#config(target);
    if (!cfg.verify) throw new DeploymentError('target config names no endpoint to verify (verify_port)');
    let fp = expected?.fingerprint256;
    if (!fp) {
      try {
        fp = fingerprint256(readFileSync(cfg.cert_path, 'utf8'));
      } catch {
        throw new DeploymentError(`no deployed certificate to compare at ${cfg.cert_path}`);
      }
    }
    return verifyEndpoint(cfg.verify, fp);
  }
}

export function checkAllowedPathSafe(path: string, allowed: readonly string[], field: string): string {
  try {
    return checkAllowedPath(path, allowed, field);
  } catch (error) {
    throw new DeploymentError(`target config ${(error as Error).message}`);
  }
}

/** A key that does not belong to the certificate would take the server down on reload. */
export function assertKeyMatches(m: DeploymentMaterial): void {
  let certKey: Buffer;
  let ownKey: Buffer;
  try {
    certKey = new X509Certificate(m.certPem).publicKey.export({ type: 'spki', format: 'der' });
  } catch {
    throw new DeploymentError('the certificate to deploy does not parse');
  }
  try {
    ownKey = createPublicKey(createPrivateKey(m.privateKeyPem)).export({ type: 'spki', format: 'der' });
  } catch {
    throw new DeploymentError('the private key for the certificate does not parse');
  }
  if (!certKey.equals(ownKey)) throw new DeploymentError('the private key does not match the certificate');
}
