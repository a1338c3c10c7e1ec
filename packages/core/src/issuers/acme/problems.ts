import { type CertwrightError, fail } from '../../errors.js';

/**
 * ACME problem documents (RFC 8555 §6.7, RFC 7807) turned into typed domain failures. The
 * message a job or an API response shows names the ACME error type and what certwright was
 * doing; the server's own `detail` text is logged by the caller, never shown (it is another
 * system's wording and may describe that system's internals).
 */

const PREFIX = 'urn:ietf:params:acme:error:';
/** Longest problem type kept (a hostile server could send anything). */
const MAX_TYPE = 64;

export interface AcmeIssuerProblem {
  /** The short type (`rateLimited`), or the full URI when it is not an ACME one. */
  type: string;
  detail: string;
  status: number;
  subproblems: { type: string; identifier?: { type: string; value: string } }[];
}

/** Reads a problem document from an answer body; tolerant of junk (an HTML error page). */
export function parseProblem(status: number, body: Uint8Array): AcmeIssuerProblem {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(body).toString('utf8'));
  } catch {
    json = undefined;
  }
  const object = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  const shortType = (value: unknown): string => {
    const text = typeof value === 'string' ? value : 'unknown';
    return (text.startsWith(PREFIX) ? text.slice(PREFIX.length) : text)
      .replace(/[^A-Za-z0-9:._/-]/g, '')
      .slice(0, MAX_TYPE);
  };
  const subproblems = Array.isArray(object.subproblems)
    ? object.subproblems.slice(0, 20).map((sub: unknown) => {
        const s = (typeof sub === 'object' && sub !== null ? sub : {}) as Record<string, unknown>;
        const id = s.identifier as { type?: unknown; value?: unknown } | undefined;
        return {
          type: shortType(s.type),
          ...(id && typeof id.type === 'string' && typeof id.value === 'string'
            ? { identifier: { type: id.type.slice(0, 10), value: id.value.slice(0, 255) } }
            : {}),
        };
      })
    : [];
  return {
    type: shortType(object.type),
    detail: typeof object.detail === 'string' ? object.detail.slice(0, 1000) : '',
    status,
    subproblems,
  };
}

/** The logged cause of a failure an ACME server answered: its problem, detail included. */
export class AcmeProblemCause extends Error {
  override readonly name = 'AcmeProblemCause';
  constructor(
    readonly problem: AcmeIssuerProblem,
    what: string,
  ) {
    super(`ACME ${what}: ${problem.status} ${problem.type}: ${problem.detail}`);
  }
}

/** The ACME problem type behind `error`, when an ACME server answered it. */
export function acmeProblemType(error: unknown): string | undefined {
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause instanceof AcmeProblemCause ? cause.problem.type : undefined;
}

/** Seconds from a Retry-After header (delta-seconds or HTTP-date, RFC 9110 §10.2.3); undefined when absent or unreadable. */
export function retryAfterSeconds(header: string | undefined, now: Date): number | undefined {
  if (!header) return undefined;
  const trimmed = header.trim();
  if (/^\d{1,9}$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}

/**
 * The domain failure for a problem the ACME server answered while certwright was doing `what`
 * (e.g. `new-order`). `retryAfter` in seconds when the answer carried one.
 */
export function problemToError(
  problem: AcmeIssuerProblem,
  what: string,
  retryAfter?: number,
): CertwrightError {
  const type = problem.type;
  const names = problem.subproblems
    .map((s) => s.identifier?.value)
    .filter((v): v is string => v !== undefined);
  const about = names.length > 0 ? ` (${names.join(', ')})` : '';
  const said = `the ACME server answered ${what} with ${type}${about}`;
  const cause = new AcmeProblemCause(problem, what);
  // Refusals of the account itself (a wrong EAB MAC, a key the CA will not take, a request the
  // account may not make) are about the issuer's settings, not about the certificate's names.
  const validating = what.startsWith('the authorization');
  if (!validating && (type === 'unauthorized' || (what === 'new-account' && type === 'malformed'))) {
    return fail(
      'issuer_not_ready',
      `${said}: the certificate authority refused this account the request (check the issuer's external account binding and contact)`,
      { cause },
    );
  }
  switch (type) {
    case 'rateLimited': {
      const seconds = retryAfter ?? 3600;
      return fail(
        'rate_limited',
        `${said}: the certificate authority rate-limits this account; retry after ${seconds} s`,
        {
          cause,
          extra: { retry_after_seconds: seconds },
        },
      );
    }
    case 'rejectedIdentifier':
    case 'unsupportedIdentifier':
    case 'caa':
      return fail('name_not_allowed', `${said}: the certificate authority will not issue for these names`, {
        cause,
      });
    case 'unauthorized':
    case 'incorrectResponse':
    case 'connection':
    case 'dns':
    case 'tls':
      return fail(
        'incorrect_response',
        `${said}: the certificate authority could not validate control of the names`,
        {
          cause,
        },
      );
    case 'badCSR':
    case 'badSignatureAlgorithm':
    case 'badPublicKey':
      return fail('invalid_input', `${said}: the certificate authority refused the request or its key`, {
        cause,
      });
    case 'alreadyRevoked':
      return fail(
        'already_revoked',
        `${said}: the certificate authority had revoked the certificate already`,
        {
          cause,
        },
      );
    case 'badRevocationReason':
      return fail(
        'invalid_input',
        `${said}: the certificate authority does not accept that revocation reason`,
        {
          cause,
        },
      );
    case 'externalAccountRequired':
    case 'accountDoesNotExist':
    case 'userActionRequired':
    case 'invalidProfile':
      return fail(
        'issuer_not_ready',
        `${said}: the issuer's ACME account or settings need attention (external account binding, terms of service or profile)`,
        { cause },
      );
    default:
      return fail('unavailable', `${said}; try again later`, { cause });
  }
}
