import type { Logger, PlainResponse, RequestHead, TransportContext } from '@certwright/core';
import type { Principal } from '../auth/principal.js';
import type { ClientAddressResolver } from '../http/client-address.js';
import type { Outcome } from './outcome.js';

export interface ResponseEvent {
  method: string;
  /** Route template (`/api/v1/agents/{id}`), or `unmatched`; never the raw path. */
  route: string;
  /** The OpenAPI operation answered, when the request reached one. */
  operationId?: string;
  status: number;
  durationMs: number;
  requestId: string;
  /** The client was over a rate limit: the answer is the 429, nothing ran. */
  rateLimited?: true;
  /** Who the request authenticated as; absent for public routes and refused requests. */
  principal?: { kind: Principal['kind']; id: string };
  /** The client address as the per-client limits see it (the trusted-proxy header's, if any). */
  client: string;
}

/** The event of each answer a handler reported, for a host that logs it once the bytes are out. */
const reported = new WeakMap<object, ResponseEvent>();

/**
 * The {@link ResponseEvent} of an answer a certwright handler (Web or direct entry) returned:
 * route template, request id, principal. A host's access log reads it after writing the answer,
 * when it knows the bytes sent; undefined for answers produced elsewhere (static files).
 */
export function responseEventOf(answer: Response | PlainResponse): ResponseEvent | undefined {
  return reported.get(answer);
}

export interface ReportOptions {
  clientAddress: ClientAddressResolver;
  /** Metrics and the like, once per answer. */
  onResponse?: (event: ResponseEvent) => void;
  logger: Logger;
}

/** Metrics and the request's debug line, once per answered request, whichever entry answered it. */
export type Report = (
  head: RequestHead,
  transport: TransportContext,
  started: number,
  requestId: string,
  outcome: Outcome,
  answer: Response | PlainResponse,
) => void;

export function reporter({ clientAddress, onResponse, logger }: ReportOptions): Report {
  return (head, transport, started, requestId, outcome, answer) => {
    const { principal } = outcome;
    const event: ResponseEvent = {
      method: head.method,
      route: outcome.route,
      ...(outcome.operationId ? { operationId: outcome.operationId } : {}),
      status: answer.status,
      durationMs: performance.now() - started,
      requestId,
      ...(outcome.rateLimited ? { rateLimited: true as const } : {}),
      ...(principal ? { principal: { kind: principal.kind, id: principal.id } } : {}),
      client: clientAddress(head, transport),
    };
    reported.set(answer, event);
    onResponse?.(event);
    logger.debug({ request_id: requestId, ...event, remote: transport.remoteAddress }, 'request');
  };
}
