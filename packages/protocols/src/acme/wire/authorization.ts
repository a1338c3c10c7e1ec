import type { AcmeEndpoint } from './context.js';
import { authorizationJson } from './order-json.js';
import { acmeProblem } from './problem.js';
import { acmeJson } from './responses.js';

/**
 * POST /authz/{id} (RFC 8555 §7.5): POST-as-GET answers the authorization; the payload
 * `{"status": "deactivated"}` deactivates it (§7.5.2).
 */
export const authorization: AcmeEndpoint = async (ctx, { id }) => {
  const { account, payload } = await ctx.authenticate();
  if (payload === undefined) {
    return acmeJson(authorizationJson(await ctx.authority.authorization(account, id as string), ctx.links));
  }
  if (payload.status !== 'deactivated' || Object.keys(payload).length !== 1) {
    throw acmeProblem('malformed', 'an authorization accepts only {"status": "deactivated"}');
  }
  const authz = await ctx.authority.deactivateAuthorization(account, id as string);
  return acmeJson(authorizationJson(authz, ctx.links));
};
