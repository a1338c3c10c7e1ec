import type { Logger, PlainResponse, RequestHead, TransportContext } from '@certwright/core';
import { errorResponse } from './errors.js';
import { finishedPlain, finishedResponse } from './finish.js';
import type { Outcome } from './outcome.js';
import type { Report } from './report.js';
import { requestIdOf } from './request-id.js';

/** The steps between the request id and the answer: a route's or a mount's (serve-*.ts). */
export type Steps = (requestId: string, outcome: Outcome) => Promise<Response | PlainResponse>;

/**
 * One request from id to report, the frame both entries run their steps in: request id,
 * the steps, the error mapping of anything they throw, the answer's headers, the report.
 * `form` is the one thing the entries differ in: the Web entry's answers are Responses.
 */
export type Exchange = <A extends Response | PlainResponse>(
  head: RequestHead,
  transport: TransportContext,
  steps: Steps,
  form: (answer: Response | PlainResponse) => A,
) => Promise<A>;

export function exchanger(report: Report, logger: Logger): Exchange {
  return async (head, transport, steps, form) => {
    const started = performance.now();
    const requestId = requestIdOf(head);
    const outcome: Outcome = { route: 'unmatched' };
    let produced: Response | PlainResponse;
    try {
      produced = await steps(requestId, outcome);
    } catch (error) {
      produced = errorResponse(error, requestId, logger);
    }
    const formed = form(produced);
    const answer = (
      formed instanceof Response
        ? await finishedResponse(formed, head.method, requestId, outcome)
        : finishedPlain(formed, requestId)
    ) as typeof formed;
    report(head, transport, started, requestId, outcome, answer);
    return answer;
  };
}
