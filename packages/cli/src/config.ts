import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { type ClientOptions, clientOptionsFromEnv, parseBoolean, readSecretFile } from '@certwright/client';
import { parse } from 'yaml';
import { UsageError } from './exit-codes.js';

/** The connection flags every command accepts. */
export interface ConnectionFlags {
  server?: string;
  apiKeyFile?: string;
  caBundle?: string;
  insecureSkipVerify?: boolean;
  config?: string;
  output?: string;
}

const KEYS = ['server', 'api_key', 'api_key_file', 'ca_bundle', 'insecure_skip_verify', 'output'] as const;
type FileConfig = Partial<Record<(typeof KEYS)[number], string | boolean>>;

export function defaultConfigPath(env: Record<string, string | undefined>): string {
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'certwright', 'config.yaml');
}

/** The config file: YAML (or JSON, which is YAML) with the keys above; absent is fine unless named explicitly. */
export function readConfigFile(flags: ConnectionFlags, env: Record<string, string | undefined>): FileConfig {
  const explicit = flags.config ?? env.CERTWRIGHT_CONFIG;
  const path = explicit ?? defaultConfigPath(env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (!explicit && (error as { code?: string }).code === 'ENOENT') return {};
    throw new UsageError(
      `config file ${path}: cannot read it (${(error as { code?: string }).code ?? 'unreadable'})`,
    );
  }
  let parsed: unknown;
  try {
    parsed = parse(text);
  } catch (error) {
    throw new UsageError(`config file ${path} is not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed))
    throw new UsageError(`config file ${path} must be a mapping of keys to values`);
  for (const key of Object.keys(parsed)) {
    if (!(KEYS as readonly string[]).includes(key)) {
      throw new UsageError(`config file ${path}: unknown key ${key} (known: ${KEYS.join(', ')})`);
    }
  }
  return parsed as FileConfig;
}

/**
 * Client options from flags, then the environment, then the config file — the first that says
 * something wins for each setting.
 */
export function resolveClientOptions(
  flags: ConnectionFlags,
  env: Record<string, string | undefined>,
  file: FileConfig,
): ClientOptions {
  const fromEnv = clientOptionsFromEnv(env);
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const baseUrl = flags.server ?? fromEnv.baseUrl ?? str(file.server);
  if (!baseUrl)
    throw new UsageError(
      'no server URL: set SVC_SERVER_URL, pass --server https://host:8443, or add server to the config file',
    );
  let apiKey: string | undefined;
  if (flags.apiKeyFile) apiKey = readSecretFile('--api-key-file', flags.apiKeyFile);
  else if (fromEnv.apiKey) apiKey = fromEnv.apiKey;
  else if (str(file.api_key_file)) apiKey = readSecretFile('api_key_file', str(file.api_key_file) as string);
  else apiKey = str(file.api_key);
  const caBundlePath = flags.caBundle ?? fromEnv.caBundlePath ?? str(file.ca_bundle);
  const insecure =
    flags.insecureSkipVerify ??
    fromEnv.insecureSkipVerify ??
    parseBoolean(
      'insecure_skip_verify',
      file.insecure_skip_verify === undefined ? undefined : String(file.insecure_skip_verify),
    );
  return {
    baseUrl,
    ...(apiKey ? { apiKey } : {}),
    ...(caBundlePath ? { caBundlePath } : {}),
    ...(insecure ? { insecureSkipVerify: true } : {}),
  };
}
