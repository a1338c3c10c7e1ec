import { createHash, createPrivateKey, createPublicKey, randomBytes, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Client, type SFTPWrapper } from 'ssh2';
import {
  type ConnectorTarget,
  type DeploymentConnector,
  DeploymentError,
  type DeploymentMaterial,
  type DeploymentOutcome,
  type VerificationOutcome,
} from '../connector.js';
import { BACKUP_SUFFIX } from '../files.js';
import { type Endpoint, fingerprint256, verifyEndpoint } from '../verify.js';

/**
 * The agent host's rules for pushing to remote hosts over SSH. The identity and the commands
 * run remotely are the agent's; the target config chooses the host, its pinned host key and
 * the remote paths (inside `allowedDirs`).
 */
export interface SshOptions {
  /** Private key (PEM/OpenSSH) the agent logs in with. */
  privateKey: string | Buffer;
  passphrase?: string;
  /** Remote directories the target config may name. */
  allowedDirs: readonly string[];
  /** Remote argv that checks the configuration (quoted for the remote shell). */
  validateCommand?: readonly string[];
  /** Remote argv that reloads the service. */
  reloadCommand?: readonly string[];
  readyTimeoutMs?: number;
}

interface SshTarget {
  host: string;
  port: number;
  username: string;
  /** `SHA256:<base64>` as `ssh-keygen -lf` prints it. */
  hostKey: string;
  certPath: string;
  keyPath: string;
  certMode: number;
  keyMode: number;
  verify?: Endpoint;
}

const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

/** A remote path is checked lexically: `..` segments and relative paths are refused. */
function remotePath(v: unknown, field: string, allowed: readonly string[]): string {
  if (typeof v !== 'string' || !v.startsWith('/'))
    throw new DeploymentError(`target config ${field} must be an absolute path`);
  if (v.split('/').some((s) => s === '..' || s === '.'))
    throw new DeploymentError(`target config ${field} must not contain . or ..`);
  if (!allowed.some((d) => v.startsWith(d.endsWith('/') ? d : `${d}/`))) {
    throw new DeploymentError(`target config ${field} is outside the allowed directories`);
  }
  return v;
}

/**
 * SSH: agentless push to a remote host (NGINX-style full chain + key files). The host key is
 * pinned by the target config: a host presenting any other key is refused before anything is
 * sent. Files are written as temporary files and renamed over the old ones with OpenSSH's
 * posix-rename, after a backup copy; a failing remote validation or reload restores them.
 */
export class SshConnector implements DeploymentConnector {
  readonly type = 'SSH';

  constructor(readonly options: SshOptions) {}

  #config(target: ConnectorTarget): SshTarget {
    const c = target.config;
    if (typeof c.host !== 'string' || c.host.length === 0)
      throw new DeploymentError('target config host is required');
    if (typeof c.username !== 'string' || c.username.length === 0)
      throw new DeploymentError('target config username is required');
    if (typeof c.host_key_sha256 !== 'string' || !/^SHA256:[A-Za-z0-9+/]{43}=?$/.test(c.host_key_sha256)) {
      throw new DeploymentError(
        'target config host_key_sha256 must pin the host key as SHA256:… (ssh-keygen -lf)',
      );
    }
    const port = c.port ?? 22;
    if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
      throw new DeploymentError('target config port must be a port number');
    }
    const mode = (v: unknown, d: number) =>
      typeof v === 'string' && /^0?[0-7]{3}$/.test(v) ? Number.parseInt(v, 8) : d;
    return {
      host: c.host,
      port,
      username: c.username,
      hostKey: c.host_key_sha256.replace(/=$/, ''),
      certPath: remotePath(c.cert_path, 'cert_path', this.options.allowedDirs),
      keyPath: remotePath(c.key_path, 'key_path', this.options.allowedDirs),
      certMode: mode(c.cert_mode, 0o644),
      keyMode: mode(c.key_mode, 0o600),
      ...(typeof c.verify_port === 'number'
        ? {
            verify: {
              host: c.host,
              port: c.verify_port,
              ...(typeof c.verify_server_name === 'string' ? { serverName: c.verify_server_name } : {}),
            },
          }
        : {}),
    };
  }

  async #session<T>(t: SshTarget, work: (s: Session) => Promise<T>): Promise<T> {
    const client = new Client();
    let presented = '';
    await new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve());
      client.once('error', (e) =>
        reject(
          new DeploymentError(
            presented && presented !== t.hostKey
              ? `the host key of ${t.host} (${presented}) is not the pinned one`
              : `SSH to ${t.host}:${t.port} failed: ${e.message}`,
          ),
        ),
      );
      client.connect({
        host: t.host,
        port: t.port,
        username: t.username,
        privateKey: this.options.privateKey,
        ...(this.options.passphrase ? { passphrase: this.options.passphrase } : {}),
        readyTimeout: this.options.readyTimeoutMs ?? 20_000,
        hostVerifier: (key: Buffer) => {
          presented = `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
          return presented === t.hostKey;
        },
      });
    });
    try {
      const sftp = await new Promise<SFTPWrapper>((resolve, reject) =>
        client.sftp((e, s) =>
          e ? reject(new DeploymentError(`SFTP on ${t.host} failed: ${e.message}`)) : resolve(s),
        ),
      );
      return await work(new Session(client, sftp));
    } finally {
      client.end();
    }
  }

  async deploy(target: ConnectorTarget, m: DeploymentMaterial): Promise<DeploymentOutcome> {
    const t = this.#config(target);
    const certKey = new X509Certificate(m.certPem).publicKey.export({ type: 'spki', format: 'der' });
    const ownKey = createPublicKey(createPrivateKey(m.privateKeyPem)).export({ type: 'spki', format: 'der' });
    if (!certKey.equals(ownKey)) throw new DeploymentError('the private key does not match the certificate');
    const files: [string, string, number][] = [
      [t.keyPath, m.privateKeyPem.endsWith('\n') ? m.privateKeyPem : `${m.privateKeyPem}\n`, t.keyMode],
      [t.certPath, `${m.certPem.trimEnd()}\n${m.chainPem ? `${m.chainPem.trimEnd()}\n` : ''}`, t.certMode],
    ];
    await this.#session(t, async (s) => {
      const previous = await Promise.all(files.map(([path]) => s.read(path)));
      const undo = async (reason: string): Promise<never> => {
        for (const [i, [path, , mode]] of files.entries()) {
          const old = previous[i];
          if (old) await s.writeAtomic(path, old, mode);
          else await s.remove(path);
        }
        if (this.options.reloadCommand) await s.exec(this.options.reloadCommand).catch(() => undefined);
        throw new DeploymentError(`${reason}; the previous certificate was restored`);
      };
      try {
        for (const [i, [path, , mode]] of files.entries()) {
          const old = previous[i];
          if (old) await s.writeAtomic(path + BACKUP_SUFFIX, old, mode);
        }
        for (const [path, content, mode] of files) await s.writeAtomic(path, Buffer.from(content), mode);
      } catch (error) {
        return undo(`writing on ${t.host} failed: ${(error as Error).message}`);
      }
      for (const [step, argv] of [
        ['validation', this.options.validateCommand],
        ['reload', this.options.reloadCommand],
      ] as const) {
        if (!argv) continue;
        try {
          await s.exec(argv);
        } catch (error) {
          return undo(`${step} failed: ${(error as Error).message}`);
        }
      }
    });
    const fp = fingerprint256(m.certPem);
    const verification = t.verify ? await verifyEndpoint(t.verify, fp) : undefined;
    if (verification && !verification.ok) {
      throw new DeploymentError(
        `verification failed: ${verification.detail}; the new files stay in place for inspection`,
      );
    }
    return {
      fingerprint256: fp,
      files: files.map(([p]) => `${t.host}:${p}`),
      ...(verification ? { verification } : {}),
    };
  }

  async validate(target: ConnectorTarget): Promise<void> {
    const t = this.#config(target);
    const argv = this.options.validateCommand;
    if (argv) await this.#session(t, (s) => s.exec(argv));
  }

  async rollback(target: ConnectorTarget): Promise<void> {
    const t = this.#config(target);
    await this.#session(t, async (s) => {
      for (const [path, mode] of [
        [t.keyPath, t.keyMode],
        [t.certPath, t.certMode],
      ] as const) {
        const backup = await s.read(path + BACKUP_SUFFIX);
        if (backup) await s.writeAtomic(path, backup, mode);
      }
      if (this.options.reloadCommand) await s.exec(this.options.reloadCommand);
    });
  }

  async testConnection(target: ConnectorTarget): Promise<Record<string, unknown>> {
    const t = this.#config(target);
    return this.#session(t, async (s) => {
      const probe = `${t.certPath}.certwright-probe-${randomBytes(4).toString('hex')}`;
      await s.writeAtomic(probe, Buffer.from('probe'), 0o600);
      await s.remove(probe);
      return { host: t.host, host_key: t.hostKey, writable: true };
    });
  }

  async verify(
    target: ConnectorTarget,
    expected?: { fingerprint256?: string },
  ): Promise<VerificationOutcome> {
    const t = this.#config(target);
    const onDisk = await this.#session(t, (s) => s.read(t.certPath));
    if (!onDisk) return { ok: false, detail: `${t.host}:${t.certPath} does not exist` };
    const fp = expected?.fingerprint256 ?? fingerprint256(onDisk.toString('utf8'));
    if (t.verify) return verifyEndpoint(t.verify, fp);
    const ok = fingerprint256(onDisk.toString('utf8')) === fp;
    return {
      ok,
      detail: ok
        ? `${t.host}:${t.certPath} holds the deployed certificate`
        : `${t.host}:${t.certPath} holds another certificate`,
    };
  }
}

/** One SSH connection's file and command operations, as promises. */
class Session {
  constructor(
    readonly client: Client,
    readonly sftp: SFTPWrapper,
  ) {}

  read(path: string): Promise<Buffer | null> {
    return new Promise((resolve, reject) => {
      this.sftp.readFile(path, (e: (Error & { code?: number }) | null | undefined, data: Buffer) => {
        // SFTP status 2 is "no such file".
        if (e) return e.code === 2 ? resolve(null) : reject(e);
        resolve(data);
      });
    });
  }

  async writeAtomic(path: string, data: Buffer, mode: number): Promise<void> {
    const slash = path.lastIndexOf('/');
    const temp = `${path.slice(0, slash + 1)}.${path.slice(slash + 1)}.${randomBytes(6).toString('hex')}.tmp`;
    await new Promise<void>((resolve, reject) =>
      this.sftp.writeFile(temp, data, { mode }, (e) => (e ? reject(e) : resolve())),
    );
    await new Promise<void>((resolve, reject) =>
      this.sftp.chmod(temp, mode, (e) => (e ? reject(e) : resolve())),
    );
    try {
      await new Promise<void>((resolve, reject) =>
        this.sftp.ext_openssh_rename(temp, path, (e) => (e ? reject(e) : resolve())),
      );
    } catch (error) {
      await this.remove(temp);
      throw error;
    }
  }

  remove(path: string): Promise<void> {
    return new Promise((resolve) => this.sftp.unlink(path, () => resolve()));
  }

  exec(argv: readonly string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      this.client.exec(argv.map(quote).join(' '), (e, stream) => {
        if (e) return reject(e);
        let out = '';
        stream.on('data', (d: Buffer) => {
          out += d;
        });
        stream.stderr.on('data', (d: Buffer) => {
          out += d;
        });
        stream.on('close', (code: number | null) => {
          const tail = out.trim().slice(-600);
          if (code === 0) resolve(out);
          else
            reject(
              new Error(
                `${argv.join(' ')} failed (exit code ${code ?? 'unknown'})${tail ? `: ${tail}` : ''}`,
              ),
            );
        });
      });
    });
  }
}

/** Reads the agent's SSH identity from a file (the reference program's `identity_file`). */
export const readIdentity = (path: string): Buffer => readFileSync(path);
