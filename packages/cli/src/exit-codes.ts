import { ClientConfigError, ConnectionError, ProblemError } from '@certwright/client';

/** The exit codes of `certwright`, documented in docs/clients/cli.md. */
export const EXIT = {
  ok: 0,
  /** Anything not classified below. */
  failure: 1,
  /** Unknown command or flag, missing or malformed argument, bad configuration (http:// URL included): nothing was sent. */
  usage: 2,
  /** 401 or 403: a missing or wrong API key, or an admin-only operation. */
  auth: 3,
  /** 404. */
  notFound: 4,
  /** 409: a conflicting state (duplicate name, still referenced, active dependencies). */
  conflict: 5,
  /** No answer: the server is down or unreachable, or its TLS certificate is not trusted. */
  connection: 6,
  /** 5xx (after the retries of 503). */
  server: 7,
  /** Any other 4xx: invalid input (400, 413, 415, 422) or rate limited (429). */
  rejected: 8,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A refusal of the command line itself; the message is shown as is. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export function exitCodeOf(error: unknown): ExitCode {
  if (error instanceof UsageError || error instanceof ClientConfigError) return EXIT.usage;
  if (error instanceof ConnectionError) return EXIT.connection;
  if (error instanceof ProblemError) {
    if (error.status === 401 || error.status === 403) return EXIT.auth;
    if (error.status === 404) return EXIT.notFound;
    if (error.status === 409) return EXIT.conflict;
    if (error.status >= 500) return EXIT.server;
    return EXIT.rejected;
  }
  return EXIT.failure;
}

/** One line for stderr: what went wrong, never a stack. */
export function messageOf(error: unknown): string {
  if (error instanceof ProblemError) {
    const p = error.problem;
    const fields = p.errors?.length ? ` (${p.errors.map((e) => `${e.field}: ${e.message}`).join('; ')})` : '';
    const id = p.request_id ? ` [request ${p.request_id}]` : '';
    return `${p.status} ${p.title}: ${p.detail}${fields}${id}`;
  }
  if (error instanceof Error) return error.message.split('\n')[0] ?? error.name;
  return String(error);
}
