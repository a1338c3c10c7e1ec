import { readFileSync } from 'node:fs';

/** Where an operator reads how to put the server behind HTTPS. */
export const HTTPS_UPGRADE_GUIDE = 'docs/clients/https-upgrade.md';

/** How an agent reaches its server and who it is there. */
export interface AgentConnection {
  /** `https://` origin of the certwright server (a path prefix is kept). */
  serverUrl: string;
  agentId: string;
  apiKey: string;
  /** PEM bundle trusted for the server's certificate, instead of the system store. */
  caBundlePem?: string;
  /** Skips certificate verification of the server; warned at start-up. Tests and labs only. */
  insecureSkipVerify?: boolean;
}

export class AgentConfigError extends Error {
  override name = 'AgentConfigError';
}

/**
 * Refuses anything but an `https://` URL: the agent sends its key on every request and
 * receives private keys and target secrets, none of which may cross a plaintext connection.
 */
export function requireHttpsUrl(raw: string, variable = 'SVC_SERVER_URL'): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AgentConfigError(`${variable} is not a URL`);
  }
  if (url.protocol === 'http:') {
    throw new AgentConfigError(
      `${variable} uses http://; the agent talks to its server over HTTPS only (see ${HTTPS_UPGRADE_GUIDE})`,
    );
  }
  if (url.protocol !== 'https:') throw new AgentConfigError(`${variable} must be an https:// URL`);
  if (url.username || url.password) throw new AgentConfigError(`${variable} must not carry credentials`);
  return url;
}

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['', '0', 'false', 'no', 'off']);

export function parseFlag(raw: string | undefined, variable: string): boolean {
  const v = (raw ?? '').trim().toLowerCase();
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  throw new AgentConfigError(`${variable} must be true or false`);
}

/** A secret given directly or as a file (the `_FILE` variant wins when both are set it is an error). */
function secret(env: NodeJS.ProcessEnv, name: string, fileValue?: string): string | undefined {
  const direct = env[name];
  const file = env[`${name}_FILE`] ?? fileValue;
  if (direct && env[`${name}_FILE`]) throw new AgentConfigError(`set ${name} or ${name}_FILE, not both`);
  if (direct) return direct.trim();
  if (file) {
    try {
      return readFileSync(file, 'utf8').trim();
    } catch {
      throw new AgentConfigError(`${name}_FILE names a file that cannot be read`);
    }
  }
  return undefined;
}

/** Values a configuration file may give; the environment overrides each of them. */
export interface AgentFileSettings {
  server_url?: string;
  agent_id?: string;
  api_key_file?: string;
  ca_bundle_path?: string;
  insecure_skip_verify?: boolean;
}

/** Builds the connection from the environment (`SVC_*`) over optional file settings. */
export function connectionFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  file: AgentFileSettings = {},
): AgentConnection {
  const serverUrl = env.SVC_SERVER_URL ?? file.server_url;
  if (!serverUrl) throw new AgentConfigError('SVC_SERVER_URL is required');
  requireHttpsUrl(serverUrl);
  const agentId = env.SVC_AGENT_ID ?? file.agent_id;
  if (!agentId) throw new AgentConfigError('SVC_AGENT_ID is required');
  const apiKey = secret(env, 'SVC_AGENT_API_KEY', file.api_key_file);
  if (!apiKey) throw new AgentConfigError('SVC_AGENT_API_KEY or SVC_AGENT_API_KEY_FILE is required');
  const caPath = env.SVC_SERVER_CA_BUNDLE_PATH ?? file.ca_bundle_path;
  let caBundlePem: string | undefined;
  if (caPath) {
    try {
      caBundlePem = readFileSync(caPath, 'utf8');
    } catch {
      throw new AgentConfigError('SVC_SERVER_CA_BUNDLE_PATH names a file that cannot be read');
    }
    if (!caBundlePem.includes('-----BEGIN CERTIFICATE-----')) {
      throw new AgentConfigError('SVC_SERVER_CA_BUNDLE_PATH holds no PEM certificate');
    }
  }
  const insecureSkipVerify =
    env.SVC_SERVER_TLS_INSECURE_SKIP_VERIFY !== undefined
      ? parseFlag(env.SVC_SERVER_TLS_INSECURE_SKIP_VERIFY, 'SVC_SERVER_TLS_INSECURE_SKIP_VERIFY')
      : (file.insecure_skip_verify ?? false);
  return {
    serverUrl,
    agentId,
    apiKey,
    ...(caBundlePem ? { caBundlePem } : {}),
    ...(insecureSkipVerify ? { insecureSkipVerify } : {}),
  };
}
