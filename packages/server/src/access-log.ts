import { responseEventOf } from '@certwright/api';
import type { Logger, PlainResponse } from '@certwright/core';

/**
 * SVC_ACCESS_LOG (on by default) and the sampling of the high-rate public routes
 * (docs/operations/observability.md, "Access log"). A fraction of 1 logs every answer, 0 none.
 */
export interface AccessLogSettings {
  enabled: boolean;
  /** SVC_ACCESS_LOG_SAMPLE_OCSP: the share of OCSP answers below 400 that are logged. */
  sampleOcsp: number;
  /** SVC_ACCESS_LOG_SAMPLE_CRL: the same for CRL (and delta CRL) answers. */
  sampleCrl: number;
}

/** What only the entry that wrote the answer knows. */
export interface WrittenAnswer {
  method: string;
  status: number;
  /** Body bytes written (0 for HEAD). */
  bytes: number;
  /** performance.now() when the request's first byte was read (or the handler was called). */
  started: number;
  /** `HTTP/1.1`, `HTTP/1.0`. */
  protocol: string;
  /** The socket's peer, for answers the certwright handler did not produce. */
  remoteAddress: string | undefined;
}

/** Logs one written answer; the same for the Web path and the direct connections. */
export type AccessLog = (answer: Response | PlainResponse, written: WrittenAnswer) => void;

const OCSP_ROUTES = '/.well-known/pki/ocsp';
const CRL_ROUTES = '/.well-known/pki/crl';

/**
 * One info line per answer, after its bytes are handed to the socket: method, route template,
 * status, duration, bytes, client, principal, request id, protocol. The request id is the one
 * the `X-Request-Id` response header carries, which the CLI and client print with every error.
 * Failures (status 400 and above) are never sampled away: a request id a user reports from an
 * error is always in the log. Undefined when the access log is off.
 */
export function createAccessLog(
  logger: Logger,
  settings: AccessLogSettings,
  random: () => number = Math.random,
): AccessLog | undefined {
  if (!settings.enabled) return undefined;
  const keep = (route: string | null, status: number): boolean => {
    if (status >= 400 || route === null) return true;
    const fraction = route.startsWith(OCSP_ROUTES)
      ? settings.sampleOcsp
      : route.startsWith(CRL_ROUTES)
        ? settings.sampleCrl
        : 1;
    return fraction >= 1 || (fraction > 0 && random() < fraction);
  };
  return (answer, written) => {
    const event = responseEventOf(answer);
    // Answers outside the certwright handler (web console files, the 503 while starting) have
    // no route template: null says so rather than logging a raw path.
    const route = event?.route ?? null;
    if (!keep(route, written.status)) return;
    const requestId = event?.requestId ?? headerOf(answer, 'x-request-id');
    logger.info(
      {
        method: written.method,
        route,
        status: written.status,
        duration_ms: Math.round((performance.now() - written.started) * 1000) / 1000,
        bytes: written.bytes,
        client: event?.client ?? written.remoteAddress ?? null,
        principal_kind: event?.principal?.kind ?? null,
        principal_id: event?.principal?.id ?? null,
        request_id: requestId ?? null,
        protocol: written.protocol,
      },
      'access',
    );
  };
}

function headerOf(answer: Response | PlainResponse, name: string): string | undefined {
  if (answer instanceof Response) return answer.headers.get(name) ?? undefined;
  return answer.headers[name];
}
