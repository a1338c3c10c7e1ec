import type { AcmeEndpoint } from './context.js';
import { challengeJson } from './order-json.js';
import { acmeProblem } from './problem.js';
import { acmeJson } from './responses.js';

/**
 * POST /challenge/{id} (RFC 8555 §7.5.1): the payload `{}` says the client is ready — the
 * challenge answers `processing` at once and is validated in the background; POST-as-GET reads
 * it. `Link: rel="up"` names its authorization; `Retry-After` comes while it is processing.
 */
export const challenge: AcmeEndpoint = async (ctx, { id }) => {
  const { account, payload } = await ctx.authenticate();
  if (payload !== undefined && Object.keys(payload).length > 0) {
    throw acmeProblem('malformed', 'a challenge response is the empty object {}');
  }
  const view =
    payload === undefined
      ? await ctx.authority.challenge(account, id as string)
      : await ctx.authority.respondToChallenge(account, id as string);
  return acmeJson(challengeJson(view.challenge, ctx.links), {
    links: [{ url: ctx.links.authz(view.authorization.id), rel: 'up' }],
    ...(view.retryAfterSeconds ? { retryAfter: view.retryAfterSeconds } : {}),
  });
};
