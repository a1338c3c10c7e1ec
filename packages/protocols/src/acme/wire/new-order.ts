import { isCertwrightError } from '@certwright/core';
import type { AcmeEndpoint } from './context.js';
import { orderJson } from './order-json.js';
import { requirePayload } from './payload.js';
import { acmeProblem } from './problem.js';
import { acmeJson } from './responses.js';

/**
 * POST /new-order (RFC 8555 §7.4): 201 with the order and its `Location`. Over the account's
 * new-order budget: `rateLimited` with `Retry-After`; `replaces` naming a certificate a
 * renewal already replaced: `alreadyReplaced` (RFC 9773 §5); an identifier type other than dns
 * and ip (`email`): `unsupportedIdentifier`.
 */
export const newOrder: AcmeEndpoint = async (ctx) => {
  const { account, payload } = await ctx.authenticate();
  try {
    const view = await ctx.authority.newOrder(account, requirePayload(payload), ctx.profile);
    return acmeJson(orderJson(view, ctx.links), {
      status: 201,
      location: ctx.links.order(view.order.id),
      ...(view.retryAfterSeconds ? { retryAfter: view.retryAfterSeconds } : {}),
    });
  } catch (error) {
    if (isCertwrightError(error) && error.reason === 'rate_limited') {
      const seconds = Number(error.extra.retry_after_seconds) || 60;
      throw acmeProblem('rateLimited', error.message, {
        status: 429,
        headers: { 'retry-after': String(seconds) },
        cause: error,
      });
    }
    if (isCertwrightError(error) && error.extra.acme_problem === 'alreadyReplaced') {
      throw acmeProblem('alreadyReplaced', error.message, { status: 409, cause: error });
    }
    // RFC 8555 §7.4: an identifier type the server does not issue for (`email`).
    if (isCertwrightError(error) && error.extra.acme_problem === 'unsupportedIdentifier') {
      throw acmeProblem('unsupportedIdentifier', error.message, { status: 400, cause: error });
    }
    throw error;
  }
};
