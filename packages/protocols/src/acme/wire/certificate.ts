import type { AcmeEndpoint } from './context.js';
import { requirePostAsGet } from './payload.js';
import { acmeBody } from './responses.js';

const PEM_CHAIN = 'application/pem-certificate-chain';

/**
 * POST-as-GET /cert/{id} (RFC 8555 §7.4.2): the certificate and its issuer chain as
 * `application/pem-certificate-chain`, with `Link: rel="up"` to the issuer chain alone
 * (`/cert/{id}/issuer`, the same answer without the end-entity certificate).
 */
export const certificate: AcmeEndpoint = async (ctx, { id }) => {
  const { account, postAsGet } = await ctx.authenticate();
  requirePostAsGet(postAsGet);
  const chain = await ctx.authority.certificateChain(account, id as string);
  return acmeBody(chain.pem, PEM_CHAIN, {
    links: [{ url: `${ctx.links.cert(id as string)}/issuer`, rel: 'up' }],
  });
};

/** POST-as-GET /cert/{id}/issuer: the issuer chain of that certificate. */
export const certificateIssuer: AcmeEndpoint = async (ctx, { id }) => {
  const { account, postAsGet } = await ctx.authenticate();
  requirePostAsGet(postAsGet);
  const chain = await ctx.authority.certificateChain(account, id as string);
  return acmeBody(chain.issuerChainPem, PEM_CHAIN);
};
