import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { dirname, extname } from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import {
  type ConnectorTarget,
  type DeploymentConnector,
  DeploymentError,
  type DeploymentMaterial,
  type DeploymentOutcome,
  type VerificationOutcome,
} from '../connector.js';
import { BACKUP_SUFFIX, type FileWriter, recoverInterrupted, restoreBackup } from '../files.js';
import type { AgentLogger } from '../logger.js';
import { type Endpoint, fingerprint256, verifyEndpoint } from '../verify.js';
import { assertKeyMatches, checkAllowedPathSafe, id, mode } from './file-server.js';
import { type PlannedFile, replaceFiles } from './transaction.js';

/** Largest configuration file read back for validation. */
const MAX_READ_BACK = 1024 * 1024;

/** The host's rules for a file-provider connector; commands are not needed (the server watches). */
export interface DynamicConfigOptions {
  allowedDirs: readonly string[];
  logger?: AgentLogger;
  writer?: FileWriter;
}

interface Common {
  key_mode: number;
  cert_mode: number;
  uid?: number;
  gid?: number;
  verify?: Endpoint;
}

/** What a flavour writes and how it reads its own output back. */
interface Flavour<C extends Common> {
  parse(c: Record<string, unknown>, path: (field: string, required: boolean) => string | undefined): C;
  anchor(cfg: C): string;
  files(cfg: C, m: DeploymentMaterial): PlannedFile[];
  /** Reads what was written and returns the leaf and key it makes the server load. */
  readBack(cfg: C): { chainPem: string; keyPem: string };
}

const nl = (s: string) => (s.endsWith('\n') ? s : `${s}\n`);

function readBounded(path: string, what: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`${what} ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (text.length > MAX_READ_BACK) throw new Error(`${what} ${path} is larger than ${MAX_READ_BACK} bytes`);
  return text;
}

function parseDocument(text: string, path: string): unknown {
  try {
    return extname(path).toLowerCase() === '.json' ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 0 });
  } catch (error) {
    throw new Error(`${path} does not parse: ${(error as Error).message.split('\n')[0]}`);
  }
}

const record = (v: unknown): Record<string, unknown> | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

// ---------------------------------------------------------------------------------------------
// Traefik: the file provider's dynamic configuration, `tls.certificates` entries pointing at
// certificate and key files. Traefik watches the provider's directory and loads changes itself.

interface TraefikConfig extends Common {
  config_path: string;
  cert_path: string;
  key_path: string;
  stores?: string[];
}

const traefik: Flavour<TraefikConfig> = {
  parse(c, path) {
    const stores = c.stores;
    if (
      stores !== undefined &&
      !(
        Array.isArray(stores) && stores.every((s) => typeof s === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(s))
      )
    ) {
      throw new DeploymentError('target config stores must list TLS store names');
    }
    return {
      config_path: path('config_path', true)!,
      cert_path: path('cert_path', true)!,
      key_path: path('key_path', true)!,
      ...(stores ? { stores: stores as string[] } : {}),
      ...common(c, 0o644),
    };
  },
  anchor: (cfg) => cfg.config_path,
  files(cfg, m) {
    const own = owner(cfg);
    const entry: Record<string, unknown> = { certFile: cfg.cert_path, keyFile: cfg.key_path };
    if (cfg.stores) entry.stores = cfg.stores;
    const doc = { tls: { certificates: [entry] } };
    const text =
      extname(cfg.config_path).toLowerCase() === '.json'
        ? `${JSON.stringify(doc, null, 2)}\n`
        : `# Written by certwright-agent; replaced on every deployment.\n${stringifyYaml(doc)}`;
    return [
      { path: cfg.key_path, content: nl(m.privateKeyPem), own: { mode: cfg.key_mode, ...own } },
      {
        path: cfg.cert_path,
        content: nl(m.certPem) + (m.chainPem ? nl(m.chainPem) : ''),
        own: { mode: cfg.cert_mode, ...own },
      },
      // Last: Traefik sees the new entry only once both files it names are complete.
      { path: cfg.config_path, content: text, own: { mode: cfg.cert_mode, ...own } },
    ];
  },
  readBack(cfg) {
    const doc = record(
      parseDocument(readBounded(cfg.config_path, 'the dynamic configuration'), cfg.config_path),
    );
    const certs = record(doc?.tls)?.certificates;
    if (!Array.isArray(certs)) throw new Error(`${cfg.config_path} has no tls.certificates list`);
    const entry = certs.map(record).find((e) => e?.certFile === cfg.cert_path);
    if (!entry) throw new Error(`${cfg.config_path} has no tls.certificates entry for ${cfg.cert_path}`);
    if (entry.keyFile !== cfg.key_path)
      throw new Error(`${cfg.config_path}: the entry for ${cfg.cert_path} names another key file`);
    return {
      chainPem: readBounded(cfg.cert_path, 'the certificate file'),
      keyPem: readBounded(cfg.key_path, 'the key file'),
    };
  },
};

// ---------------------------------------------------------------------------------------------
// Envoy: a path-based SDS resource file holding an
// envoy.extensions.transport_sockets.tls.v3.Secret with the chain and key inline. Envoy watches
// the file and expects it to be replaced by a rename, which is how every file here is written.

const SECRET_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret';

interface EnvoyConfig extends Common {
  sds_path: string;
  secret_name: string;
}

const envoy: Flavour<EnvoyConfig> = {
  parse(c, path) {
    const name = c.secret_name ?? 'server_cert';
    if (typeof name !== 'string' || !/^[A-Za-z0-9_.:-]{1,128}$/.test(name))
      throw new DeploymentError('target config secret_name must be a simple name');
    // The file holds the key: owner-only unless the operator says otherwise.
    return { sds_path: path('sds_path', true)!, secret_name: name, ...common(c, 0o600) };
  },
  anchor: (cfg) => cfg.sds_path,
  files(cfg, m) {
    const doc = {
      resources: [
        {
          '@type': SECRET_TYPE,
          name: cfg.secret_name,
          tls_certificate: {
            certificate_chain: { inline_string: nl(m.certPem) + (m.chainPem ? nl(m.chainPem) : '') },
            private_key: { inline_string: nl(m.privateKeyPem) },
          },
        },
      ],
    };
    const text =
      extname(cfg.sds_path).toLowerCase() === '.json'
        ? `${JSON.stringify(doc, null, 2)}\n`
        : stringifyYaml(doc, { lineWidth: 0 });
    return [{ path: cfg.sds_path, content: text, own: { mode: cfg.key_mode, ...owner(cfg) } }];
  },
  readBack(cfg) {
    const doc = record(parseDocument(readBounded(cfg.sds_path, 'the SDS file'), cfg.sds_path));
    const resources = doc?.resources;
    if (!Array.isArray(resources)) throw new Error(`${cfg.sds_path} has no resources list`);
    const secret = resources.map(record).find((r) => r?.name === cfg.secret_name);
    if (!secret) throw new Error(`${cfg.sds_path} has no secret named ${cfg.secret_name}`);
    if (secret['@type'] !== SECRET_TYPE)
      throw new Error(`${cfg.sds_path}: ${cfg.secret_name} is not a TLS Secret`);
    const tlsCert = record(secret.tls_certificate);
    const chain = record(tlsCert?.certificate_chain)?.inline_string;
    const key = record(tlsCert?.private_key)?.inline_string;
    if (typeof chain !== 'string' || typeof key !== 'string')
      throw new Error(`${cfg.sds_path}: ${cfg.secret_name} lacks an inline certificate_chain or private_key`);
    return { chainPem: chain, keyPem: key };
  },
};

function common(c: Record<string, unknown>, defaultCertMode: number): Common {
  let verify: Endpoint | undefined;
  if (c.verify_port !== undefined) {
    const port = c.verify_port;
    if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)
      throw new DeploymentError('target config verify_port must be a port number');
    verify = {
      host: typeof c.verify_host === 'string' ? c.verify_host : '127.0.0.1',
      port,
      ...(typeof c.verify_server_name === 'string' ? { serverName: c.verify_server_name } : {}),
    };
  }
  const uid = id(c.uid, 'uid');
  const gid = id(c.gid, 'gid');
  return {
    cert_mode: mode(c.cert_mode, 'cert_mode', defaultCertMode),
    key_mode: mode(c.key_mode, 'key_mode', 0o600),
    ...(uid !== undefined ? { uid } : {}),
    ...(gid !== undefined ? { gid } : {}),
    ...(verify ? { verify } : {}),
  };
}

const owner = (cfg: Common) => ({
  ...(cfg.uid !== undefined ? { uid: cfg.uid } : {}),
  ...(cfg.gid !== undefined ? { gid: cfg.gid } : {}),
});

/**
 * Checks what a flavour wrote: it parses, names this deployment's files or secret, the first
 * certificate is the expected leaf and the key belongs to it.
 */
function checkReadBack(pair: { chainPem: string; keyPem: string }, expectedFp: string | undefined): string {
  const leafPem = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/.exec(pair.chainPem)?.[0];
  if (!leafPem) throw new Error('the written certificate chain holds no PEM certificate');
  let leafKey: Buffer;
  let key: Buffer;
  try {
    leafKey = new X509Certificate(leafPem).publicKey.export({ type: 'spki', format: 'der' });
  } catch {
    throw new Error('the written certificate does not parse');
  }
  try {
    key = createPublicKey(createPrivateKey(pair.keyPem)).export({ type: 'spki', format: 'der' });
  } catch {
    throw new Error('the written private key does not parse');
  }
  if (!leafKey.equals(key)) throw new Error('the written private key does not match the written certificate');
  const fp = fingerprint256(leafPem);
  if (expectedFp && fp !== expectedFp) throw new Error('the written certificate is not the one deployed');
  return fp;
}

/**
 * Traefik (file provider) and Envoy (path-based SDS): servers that watch their files, so a
 * deployment is the shared atomic write with backups, validated by reading the written
 * configuration back and checking the certificate and key it names. There is no reload command;
 * `verify_port` checks the running server when the operator names one.
 */
export class DynamicConfigConnector<C extends Common> implements DeploymentConnector {
  constructor(
    readonly type: string,
    readonly flavour: Flavour<C>,
    readonly options: DynamicConfigOptions,
  ) {}

  #config(target: ConnectorTarget): C {
    const c = target.config;
    return this.flavour.parse(c, (field, required) => {
      const v = c[field];
      if (v === undefined && !required) return undefined;
      if (typeof v !== 'string' || v.length === 0)
        throw new DeploymentError(`target config ${field} is required`);
      return checkAllowedPathSafe(v, this.options.allowedDirs, field);
    });
  }

  async deploy(target: ConnectorTarget, material: DeploymentMaterial): Promise<DeploymentOutcome> {
    const cfg = this.#config(target);
    assertKeyMatches(material);
    const files = this.flavour.files(cfg, material);
    const fp = fingerprint256(material.certPem);
    const verification = await replaceFiles(
      this.flavour.anchor(cfg),
      files,
      {
        validate: async () => {
          checkReadBack(this.flavour.readBack(cfg), fp);
        },
        activate: async () => undefined,
        confirm: async () => (cfg.verify ? verifyEndpoint(cfg.verify, fp) : undefined),
        afterRestore: async () => undefined,
      },
      {
        targetId: target.id,
        ...(this.options.logger ? { logger: this.options.logger } : {}),
        ...(this.options.writer ? { writer: this.options.writer } : {}),
      },
    );
    return { fingerprint256: fp, files: files.map((f) => f.path), ...(verification ? { verification } : {}) };
  }

  async validate(target: ConnectorTarget): Promise<void> {
    const cfg = this.#config(target);
    try {
      checkReadBack(this.flavour.readBack(cfg), undefined);
    } catch (error) {
      throw new DeploymentError((error as Error).message);
    }
  }

  async rollback(target: ConnectorTarget): Promise<void> {
    const cfg = this.#config(target);
    if (recoverInterrupted(this.flavour.anchor(cfg))) return;
    for (const f of this.flavour.files(cfg, PLACEHOLDER)) {
      if (existsSync(f.path + BACKUP_SUFFIX)) restoreBackup(f.path, true);
    }
  }

  async testConnection(target: ConnectorTarget): Promise<Record<string, unknown>> {
    const cfg = this.#config(target);
    for (const f of this.flavour.files(cfg, PLACEHOLDER)) {
      try {
        accessSync(dirname(f.path), constants.W_OK);
      } catch {
        throw new DeploymentError(`the directory of ${f.path} is not writable by the agent`);
      }
    }
    return { writable: true };
  }

  async verify(
    target: ConnectorTarget,
    expected?: { fingerprint256?: string },
  ): Promise<VerificationOutcome> {
    const cfg = this.#config(target);
    let fp: string;
    try {
      fp = checkReadBack(this.flavour.readBack(cfg), expected?.fingerprint256);
    } catch (error) {
      return { ok: false, detail: (error as Error).message };
    }
    if (cfg.verify) return verifyEndpoint(cfg.verify, fp);
    return {
      ok: true,
      detail: `${this.flavour.anchor(cfg)} names the deployed certificate and its key (no endpoint to check)`,
      servedFingerprint256: fp,
    };
  }
}

/** Only the paths of `files()` are used by rollback and testConnection; no content is written. */
const PLACEHOLDER: DeploymentMaterial = {
  versionId: '',
  serialNumber: '',
  certPem: '',
  chainPem: null,
  privateKeyPem: '',
};

/** Traefik file provider: `config_path` (dynamic configuration), `cert_path`, `key_path`. */
export const traefikConnector = (o: DynamicConfigOptions) =>
  new DynamicConfigConnector('Traefik', traefik, o);

/** Envoy path-based SDS: `sds_path` (a .yaml/.yml or .json resource file), `secret_name`. */
export const envoyConnector = (o: DynamicConfigOptions) => new DynamicConfigConnector('Envoy', envoy, o);
