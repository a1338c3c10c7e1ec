import type { AcmeEndpoint } from './context.js';
import { acmeJson } from './responses.js';

/**
 * GET /directory (RFC 8555 §7.1.1): the URLs of the profile's resources and its `meta`:
 * terms of service, website, whether new accounts need an external account binding, and
 * `profiles` (draft-aaron-acme-profiles) naming the certificate profile this directory issues
 * under, so a client can tell directories apart.
 */
export const directory: AcmeEndpoint = async ({ profile, links, settings }) => {
  const { acme } = profile;
  const meta: Record<string, unknown> = { externalAccountRequired: acme.eab_required };
  if (acme.terms_of_service_url) meta.termsOfService = acme.terms_of_service_url;
  if (acme.website_url) meta.website = acme.website_url;
  meta.profiles = { [acme.path_id ?? profile.id]: profile.description || profile.name };
  return acmeJson({
    newNonce: links.newNonce,
    newAccount: links.newAccount,
    newOrder: links.newOrder,
    revokeCert: links.revokeCert,
    keyChange: links.keyChange,
    ...(settings.renewalInfo ? { renewalInfo: links.renewalInfoBase } : {}),
    meta,
  });
};
