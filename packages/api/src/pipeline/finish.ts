import { type PlainResponse, withFixedLength } from '@certwright/core';
import type { Outcome } from './outcome.js';

/**
 * The headers every answer leaves with, whichever entry produced it. Protocol answers (EST,
 * SCEP, OCSP, CRL, ACME), this pipeline's refusals on their paths included, go out with a
 * Content-Length, never chunked (docs/architecture.md, "One handler type"). REST answers (JSON,
 * problem JSON, the reference page) are never to be sniffed into something a browser would
 * render or run. Both carry the request id.
 */
export async function finishedResponse(
  response: Response,
  method: string,
  requestId: string,
  outcome: Outcome,
): Promise<Response> {
  const answer = outcome.protocol ? await withFixedLength(response, method) : response;
  if (!outcome.protocol) answer.headers.set('x-content-type-options', 'nosniff');
  answer.headers.set('x-request-id', requestId);
  return answer;
}

/** A written answer (only protocols give them: their length is stated) with the request id. */
export function finishedPlain(answer: PlainResponse, requestId: string): PlainResponse {
  return { ...answer, headers: { ...answer.headers, 'x-request-id': requestId } };
}
