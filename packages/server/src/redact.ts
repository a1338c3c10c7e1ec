import { CREDENTIAL_QUERY_PARAMETERS, isCertwrightError } from '@certwright/core';

/**
 * Log redaction: the server's second line of defence (code never logs secrets on purpose).
 * Works on any value at any depth, so it covers records, configs and errors whatever their
 * shape, by two rules:
 *
 * - by name: a member whose name says it holds a secret (`private_key_pem`, `key_pem`,
 *   `api_key`, `password`, `challenge_password`, `client_secret`, `token`, `authorization`,
 *   `cookie`, `headers` …, in snake_case, camelCase or kebab-case) is replaced whole;
 * - by content: in every string, PEM private keys, the password of a URL's user-info, the
 *   values of credential query parameters and bearer tokens are replaced.
 */
export const REDACTED = '[redacted]';

/** Normalized member names (lowercase, no `_`, `-` or spaces) that are always secret. */
const SECRET_NAMES = new Set([
  'authorization',
  'proxyauthorization',
  'cookie',
  'setcookie',
  'pass',
  'pwd',
  // Webhook and HTTP header maps: any custom header may carry a credential.
  'headers',
  'encryptionkey',
  'secretbox',
]);
/** …and parts of names that mark a secret wherever they appear (`sslpassword`, `agent_key_hash`). */
const SECRET_NAME_PARTS =
  /password|passphrase|passwd|secret|token|apikey|privatekey|keypem|keyhash|credential/;

const PRIVATE_KEY_PEM = /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?(?:-----END \1PRIVATE KEY-----|$)/g;
const URL_USER_INFO = /\b([a-z][a-z0-9+.-]*:\/\/[^\s/:@]*):[^\s/@]*@/gi;
const CREDENTIAL_PARAMETER = new RegExp(
  `([?&;](?:${CREDENTIAL_QUERY_PARAMETERS.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})=)[^&;\\s#"']*`,
  'gi',
);
const BEARER = /\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi;

const MAX_DEPTH = 12;

export function isSecretName(name: string): boolean {
  const normalized = name.toLowerCase().replace(/[_\-\s]/g, '');
  return SECRET_NAMES.has(normalized) || SECRET_NAME_PARTS.test(normalized);
}

/** The string with every secret it visibly carries replaced. */
export function redactString(text: string): string {
  return text
    .replace(PRIVATE_KEY_PEM, `-----BEGIN $1PRIVATE KEY----- ${REDACTED}`)
    .replace(URL_USER_INFO, '$1:***@')
    .replace(CREDENTIAL_PARAMETER, '$1***')
    .replace(BEARER, '$1 ***');
}

/**
 * A redacted copy of `value` (the input is never changed). Errors become plain objects with
 * their type, message, stack, code and cause; bytes become their length; cycles and depth
 * beyond reason are cut.
 */
export interface RedactOptions {
  /**
   * `all`: every error keeps its stack (debug logging). `unexpected`: only errors that are not
   * operational — a typed domain error other than `internal`, or a system error such as
   * ECONNREFUSED, is one line without its stack, since a receiver or a database that is down
   * repeats it on every attempt.
   */
  stacks: 'all' | 'unexpected';
}

export function redactValue(
  value: unknown,
  options: RedactOptions = { stacks: 'all' },
  seen = new WeakSet<object>(),
  depth = 0,
): unknown {
  if (typeof value === 'string') return redactString(value);
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[circular]';
  if (depth >= MAX_DEPTH) return '[too deep]';
  if (value instanceof Date) return value;
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return `[${value.byteLength} bytes]`;
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => redactValue(item, options, seen, depth + 1));
    if (value instanceof Map) {
      return redactValue(Object.fromEntries(value), options, seen, depth + 1);
    }
    const source: Record<string, unknown> =
      value instanceof Error
        ? errorFields(value, options.stacks === 'all' || !operational(value))
        : (value as Record<string, unknown>);
    const out: Record<string, unknown> = {};
    for (const [name, member] of Object.entries(source)) {
      out[name] =
        isSecretName(name) && member !== undefined && member !== null
          ? REDACTED
          : redactValue(member, options, seen, depth + 1);
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

/** A failure of the world, not of the code: its stack says nothing an operator can act on. */
function operational(error: Error): boolean {
  if (isCertwrightError(error)) return error.code !== 'internal';
  const code = (error as { code?: unknown }).code;
  return (
    (typeof code === 'string' && /^E[A-Z0-9_]+$/.test(code)) ||
    error.name === 'TimeoutError' ||
    error.name === 'AbortError'
  );
}

function errorFields(error: Error, withStack: boolean): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    type: error.name,
    message: error.message,
    ...(withStack ? { stack: error.stack } : {}),
    ...(error as unknown as Record<string, unknown>),
  };
  if (error.cause !== undefined) fields.cause = error.cause;
  return fields;
}
