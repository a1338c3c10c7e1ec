import { mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import {
  AgentConfigError,
  type AgentConnection,
  type AgentFileSettings,
  connectionFromEnv,
} from './config.js';
import type { DeploymentConnector } from './connector.js';
import {
  apacheConnector,
  caddyConnector,
  dovecotConnector,
  envoyConnector,
  type FileServerOptions,
  haproxyConnector,
  JavaKeystoreConnector,
  KubernetesRestClient,
  KubernetesSecretConnector,
  nginxConnector,
  postfixConnector,
  readIdentity,
  SshConnector,
  traefikConnector,
} from './connectors/index.js';
import { writeFileAtomic } from './files.js';
import { AgentKeyStore } from './keys.js';
import type { AgentLogger } from './logger.js';
import { CertwrightAgent, type StopReason } from './runner.js';

/** The reference agent's configuration file (JSON); the environment overrides the connection. */
export interface AgentProgramConfig extends AgentFileSettings {
  /** Keys generated on this host and other state; default /var/lib/certwright-agent. */
  state_dir?: string;
  poll_interval_seconds?: number;
  heartbeat_interval_seconds?: number;
  /** The agent's status as JSON, rewritten after every round. */
  status_file?: string;
  /** `127.0.0.1:port` (loopback only) answering `GET /status` with the same JSON. */
  status_listen?: string;
  /** Per target type: the host's allowed directories and its validate/reload commands. */
  connectors?: Record<
    string,
    {
      /** Directories the target config may write in (every connector but KubernetesSecret). */
      allowed_dirs?: string[];
      validate_command?: string[];
      reload_command?: string[];
      /** SSH only: the private key the agent logs in to remote hosts with. */
      identity_file?: string;
      /** KubernetesSecret only: the API server (`https://`), token and CA files, namespaces. */
      api_server?: string;
      token_file?: string;
      ca_file?: string;
      allowed_namespaces?: string[];
    }
  >;
  /** Host discovery: directories or files scanned for certificates and reported to the server. */
  discovery?: { paths: string[]; interval_seconds?: number };
}

/** Where a pod's service account token and cluster CA are mounted. */
const SERVICE_ACCOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

const FACTORIES: Record<
  string,
  (o: Partial<FileServerOptions> & Pick<FileServerOptions, 'allowedDirs'>) => DeploymentConnector
> = {
  NGINX: nginxConnector,
  Apache: apacheConnector,
  HAProxy: haproxyConnector,
  Caddy: caddyConnector,
  Postfix: postfixConnector,
  Dovecot: dovecotConnector,
};

const isStrings = (v: unknown): v is string[] =>
  Array.isArray(v) && v.length > 0 && v.every((s) => typeof s === 'string');

export function readProgramConfig(path: string | undefined): AgentProgramConfig {
  if (!path) return {};
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new AgentConfigError(
      `the configuration file ${path} ${(error as NodeJS.ErrnoException).code ? 'cannot be read' : 'is not valid JSON'}`,
    );
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    throw new AgentConfigError('the configuration file must hold a JSON object');
  return raw as AgentProgramConfig;
}

export function buildConnectors(config: AgentProgramConfig): DeploymentConnector[] {
  const out: DeploymentConnector[] = [];
  for (const [type, c] of Object.entries(config.connectors ?? {})) {
    if (type === 'KubernetesSecret') {
      out.push(kubernetesConnector(c ?? {}));
      continue;
    }
    if (!isStrings(c?.allowed_dirs))
      throw new AgentConfigError(`connectors.${type}.allowed_dirs must list directories`);
    for (const k of ['validate_command', 'reload_command'] as const) {
      if (c[k] !== undefined && !isStrings(c[k]))
        throw new AgentConfigError(`connectors.${type}.${k} must be an argv array`);
    }
    const commands = {
      ...(c.validate_command ? { validateCommand: c.validate_command } : {}),
      ...(c.reload_command ? { reloadCommand: c.reload_command } : {}),
    };
    if (type === 'JavaKeystore') {
      out.push(
        new JavaKeystoreConnector({
          allowedDirs: c.allowed_dirs,
          ...(c.reload_command ? { reloadCommand: c.reload_command } : {}),
        }),
      );
      continue;
    }
    if (type === 'SSH') {
      if (typeof c.identity_file !== 'string')
        throw new AgentConfigError('connectors.SSH.identity_file is required');
      let privateKey: Buffer;
      try {
        privateKey = readIdentity(c.identity_file);
      } catch {
        throw new AgentConfigError('connectors.SSH.identity_file cannot be read');
      }
      out.push(new SshConnector({ privateKey, allowedDirs: c.allowed_dirs, ...commands }));
      continue;
    }
    if (type === 'Traefik' || type === 'Envoy') {
      const make = type === 'Traefik' ? traefikConnector : envoyConnector;
      out.push(make({ allowedDirs: c.allowed_dirs }));
      continue;
    }
    const factory = FACTORIES[type];
    if (!factory)
      throw new AgentConfigError(`connectors.${type}: no built-in connector for this target type`);
    out.push(factory({ allowedDirs: c.allowed_dirs, ...commands }));
  }
  return out;
}

function kubernetesConnector(
  c: NonNullable<AgentProgramConfig['connectors']>[string],
): KubernetesSecretConnector {
  const server = c.api_server ?? kubernetesServiceUrl();
  if (!server)
    throw new AgentConfigError(
      'connectors.KubernetesSecret.api_server is required outside a pod (KUBERNETES_SERVICE_HOST is not set)',
    );
  if (!isStrings(c.allowed_namespaces))
    throw new AgentConfigError('connectors.KubernetesSecret.allowed_namespaces must list namespaces');
  const tokenFile = c.token_file ?? `${SERVICE_ACCOUNT}/token`;
  const caFile = c.ca_file ?? `${SERVICE_ACCOUNT}/ca.crt`;
  let caPem: string;
  try {
    caPem = readFileSync(caFile, 'utf8');
    readFileSync(tokenFile, 'utf8');
  } catch {
    throw new AgentConfigError('connectors.KubernetesSecret: the token_file or ca_file cannot be read');
  }
  let client: KubernetesRestClient;
  try {
    client = new KubernetesRestClient({
      server,
      caPem,
      // Read on every call: projected service account tokens are rotated by the kubelet.
      token: () => readFileSync(tokenFile, 'utf8').trim(),
    });
  } catch (error) {
    throw new AgentConfigError(`connectors.KubernetesSecret.api_server: ${(error as Error).message}`);
  }
  return new KubernetesSecretConnector({ api: client, allowedNamespaces: c.allowed_namespaces });
}

function kubernetesServiceUrl(): string | undefined {
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const port = process.env.KUBERNETES_SERVICE_PORT ?? '443';
  if (!host) return undefined;
  return `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** The discovery settings of the configuration file, checked. */
export function discoveryFromConfig(
  config: AgentProgramConfig,
): { paths: string[]; intervalMs?: number } | undefined {
  const d = config.discovery;
  if (d === undefined) return undefined;
  if (!isStrings(d?.paths) || !d.paths.every((p) => p.startsWith('/')))
    throw new AgentConfigError('discovery.paths must list absolute paths');
  if (d.interval_seconds !== undefined && !(typeof d.interval_seconds === 'number' && d.interval_seconds > 0))
    throw new AgentConfigError('discovery.interval_seconds must be a positive number');
  return { paths: d.paths, ...(d.interval_seconds ? { intervalMs: d.interval_seconds * 1000 } : {}) };
}

function loopbackListen(value: string): { host: string; port: number } {
  const m = /^(127\.0\.0\.1|\[::1\]|localhost):(\d{1,5})$/.exec(value);
  if (!m || Number(m[2]) > 65535) {
    throw new AgentConfigError('status_listen must be a loopback address and port, e.g. 127.0.0.1:9464');
  }
  return { host: m[1] === '[::1]' ? '::1' : m[1]!, port: Number(m[2]) };
}

export interface RunningProgram {
  agent: CertwrightAgent;
  done: Promise<StopReason>;
  statusServer?: Server;
}

/**
 * Starts the reference agent from a configuration file and the environment. Every mistake in
 * either is an {@link AgentConfigError} thrown before anything talks to the server.
 */
export async function startAgentProgram(
  env: NodeJS.ProcessEnv,
  configPath: string | undefined,
  logger: AgentLogger,
): Promise<RunningProgram> {
  const config = readProgramConfig(configPath);
  const connection: AgentConnection = connectionFromEnv(env, config);
  const connectors = buildConnectors(config);
  const discovery = discoveryFromConfig(config);
  const stateDir = config.state_dir ?? '/var/lib/certwright-agent';
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const seconds = (v: unknown, name: string, fallback: number) => {
    if (v === undefined) return fallback;
    if (typeof v !== 'number' || !(v > 0)) throw new AgentConfigError(`${name} must be a positive number`);
    return v * 1000;
  };
  const agent = new CertwrightAgent({
    connection,
    connectors,
    keyStore: new AgentKeyStore(join(stateDir, 'keys')),
    logger,
    pollIntervalMs: seconds(config.poll_interval_seconds, 'poll_interval_seconds', 30),
    heartbeatIntervalMs: seconds(config.heartbeat_interval_seconds, 'heartbeat_interval_seconds', 60),
    ...(discovery ? { discovery } : {}),
  });
  let statusServer: Server | undefined;
  if (config.status_listen) {
    const { host, port } = loopbackListen(config.status_listen);
    statusServer = createServer((req, res) => {
      if (req.method === 'GET' && req.url === '/status') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(agent.status()));
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve, reject) => {
      statusServer!.once('error', () =>
        reject(new AgentConfigError(`status_listen ${config.status_listen} cannot be bound`)),
      );
      statusServer!.listen(port, host, resolve);
    });
  }
  const writeStatus = () => {
    if (!config.status_file) return;
    try {
      mkdirSync(dirname(config.status_file), { recursive: true });
      writeFileAtomic(config.status_file, `${JSON.stringify(agent.status())}\n`, { mode: 0o644 });
    } catch (error) {
      logger.warn({ err: (error as Error).message }, 'the status file could not be written');
    }
  };
  const timer = setInterval(writeStatus, 5_000);
  timer.unref();
  logger.info(
    {
      agent_id: connection.agentId,
      server_url: connection.serverUrl,
      connectors: connectors.map((c) => c.type),
    },
    'certwright-agent started',
  );
  const done = agent.run().then((reason) => {
    clearInterval(timer);
    writeStatus();
    statusServer?.close();
    return reason;
  });
  return { agent, done, ...(statusServer ? { statusServer } : {}) };
}
