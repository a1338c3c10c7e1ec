import { readFileSync } from 'node:fs';
import { ClientConfigError, InsecureBaseUrlError } from './errors.js';

export interface ClientOptions {
  /** `https://host:8443`, optionally with a path prefix when a gateway serves the API below one. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <key>`; omit for a server running with auth type `none`. */
  apiKey?: string;
  /** PEM file of the CA (or CAs) that issued the server's certificate; replaces the system roots. */
  caBundlePath?: string;
  /** PEM text instead of a file; replaces the system roots as `caBundlePath` does. */
  ca?: string;
  /** Development only: accept any server certificate. A warning is emitted at construction. */
  insecureSkipVerify?: boolean;
  /** Retries of a 429 or 503 answer; default 3. */
  maxRetries?: number;
  /** The longest Retry-After the client waits out (ms); a longer one is returned as the error. Default 60 s. */
  maxRetryDelayMs?: number;
  /** Per-request time limit in ms; default 60 s. */
  timeoutMs?: number;
  /** Where the insecure-verification warning goes; default `process.emitWarning`. */
  warn?: (message: string) => void;
  /** Added to the User-Agent, e.g. `certwright-cli/3.0.0`. */
  userAgent?: string;
}

/** The base URL, parsed; anything but https:// is refused before a key could be sent. */
export function parseBaseUrl(value: string): URL {
  const trimmed = value.trim();
  if (/^http:\/\//i.test(trimmed)) throw new InsecureBaseUrlError(trimmed);
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw new ClientConfigError(`the server URL ${JSON.stringify(value)} is not a valid URL`);
  }
  if (url.protocol !== 'https:') {
    throw new ClientConfigError(`the server URL must start with https:// (got ${url.protocol}//)`);
  }
  if (url.search || url.hash) throw new ClientConfigError('the server URL must not have a query or fragment');
  return url;
}

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['', '0', 'false', 'no', 'off']);

export function parseBoolean(name: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  const normalized = value.trim().toLowerCase();
  if (TRUE.has(normalized)) return true;
  if (FALSE.has(normalized)) return false;
  throw new ClientConfigError(`${name} must be true or false (got ${JSON.stringify(value)})`);
}

/** Reads a secret file: one line, surrounding whitespace dropped. */
export function readSecretFile(variable: string, path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: string }).code ?? 'unreadable';
    throw new ClientConfigError(`${variable}: cannot read ${path} (${code})`);
  }
  const key = text.trim();
  if (key === '') throw new ClientConfigError(`${variable}: ${path} is empty`);
  return key;
}

/**
 * The options the environment gives: `SVC_SERVER_URL`, `SVC_API_KEY` or `SVC_API_KEY_FILE`,
 * `SVC_SERVER_CA_BUNDLE_PATH`, `SVC_SERVER_TLS_INSECURE_SKIP_VERIFY`. Unset variables are absent.
 */
export function clientOptionsFromEnv(
  env: Record<string, string | undefined> = process.env,
): Partial<ClientOptions> {
  const out: Partial<ClientOptions> = {};
  if (env.SVC_SERVER_URL) out.baseUrl = env.SVC_SERVER_URL;
  if (env.SVC_API_KEY && env.SVC_API_KEY_FILE) {
    throw new ClientConfigError('set SVC_API_KEY or SVC_API_KEY_FILE, not both');
  }
  if (env.SVC_API_KEY) out.apiKey = env.SVC_API_KEY;
  if (env.SVC_API_KEY_FILE) out.apiKey = readSecretFile('SVC_API_KEY_FILE', env.SVC_API_KEY_FILE);
  if (env.SVC_SERVER_CA_BUNDLE_PATH) out.caBundlePath = env.SVC_SERVER_CA_BUNDLE_PATH;
  const insecure = parseBoolean(
    'SVC_SERVER_TLS_INSECURE_SKIP_VERIFY',
    env.SVC_SERVER_TLS_INSECURE_SKIP_VERIFY,
  );
  if (insecure !== undefined) out.insecureSkipVerify = insecure;
  return out;
}
