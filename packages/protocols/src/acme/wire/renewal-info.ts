import type { AcmeEndpoint } from './context.js';
import { acmeProblem } from './problem.js';
import { acmeJson } from './responses.js';

/**
 * GET /renewal-info/{certID} (RFC 9773 §4.2), unauthenticated: the suggested renewal window,
 * with `Retry-After` from the poll interval. Absent (404) when renewal information is off.
 */
export const renewalInfo: AcmeEndpoint = async (ctx, { certId }) => {
  if (!ctx.settings.renewalInfo)
    throw acmeProblem('malformed', 'no ACME resource at this path', { status: 404 });
  const info = await ctx.authority.renewalInfo(certId as string);
  return acmeJson(
    {
      suggestedWindow: {
        start: info.suggestedWindow.start.toISOString(),
        end: info.suggestedWindow.end.toISOString(),
      },
    },
    { retryAfter: ctx.settings.renewalInfoPollSeconds },
  );
};
