import type { AcmeEndpoint } from './context.js';
import { orderJson } from './order-json.js';
import { requirePostAsGet } from './payload.js';
import { acmeJson } from './responses.js';

/**
 * POST-as-GET /order/{id} (RFC 8555 §7.1.3): the order of the signing account (another
 * account's order is 404, as an unknown one). `Retry-After` while it is pending or processing.
 */
export const order: AcmeEndpoint = async (ctx, { id }) => {
  const { account, postAsGet } = await ctx.authenticate();
  requirePostAsGet(postAsGet);
  const view = await ctx.authority.order(account, id as string);
  return acmeJson(orderJson(view, ctx.links), {
    ...(view.retryAfterSeconds ? { retryAfter: view.retryAfterSeconds } : {}),
  });
};
