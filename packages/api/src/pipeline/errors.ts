import { CertwrightError, isCertwrightError, type Logger } from '@certwright/core';
import { problemFromError } from '../http/problem.js';

/**
 * The problem JSON of an error a step or handler threw. Internal causes are logged with the
 * request id and answered with a fixed detail: no stack, SQL or path reaches a client.
 */
export function errorResponse(error: unknown, requestId: string, logger: Logger): Response {
  if (isCertwrightError(error)) {
    if (error.code === 'internal' || error.code === 'unavailable') {
      logger.error({ request_id: requestId, err: error }, 'request failed');
    }
    return problemFromError(error, requestId);
  }
  logger.error({ request_id: requestId, err: error }, 'unexpected error');
  return problemFromError(new CertwrightError('internal', 'internal error', { cause: error }), requestId);
}
