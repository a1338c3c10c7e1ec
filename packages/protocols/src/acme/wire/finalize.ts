import { decodeBase64Url } from '@certwright/core/pki';
import type { AcmeEndpoint } from './context.js';
import { orderJson } from './order-json.js';
import { requirePayload, stringMember } from './payload.js';
import { acmeJson } from './responses.js';

/** A CSR is 0.3–4 KiB; the bounded CSR parser allows 64 KiB. */
const MAX_CSR_BYTES = 64 * 1024;

/**
 * POST /order/{id}/finalize (RFC 8555 §7.4): `{csr}` as base64url DER. Issuance is immediate,
 * so the answer is the order already `valid` with its `certificate` URL; an order that is not
 * ready is `orderNotReady`, a CSR whose names differ from the order's identifiers `badCSR`.
 */
export const finalize: AcmeEndpoint = async (ctx, { id }) => {
  const { account, payload } = await ctx.authenticate();
  const csr = decodeBase64Url(stringMember(requirePayload(payload), 'csr'), 'csr', MAX_CSR_BYTES);
  const view = await ctx.authority.finalize(account, id as string, csr);
  return acmeJson(orderJson(view, ctx.links), {
    location: ctx.links.order(view.order.id),
    ...(view.retryAfterSeconds ? { retryAfter: view.retryAfterSeconds } : {}),
  });
};
