import { ACME_MAX_CONTACTS } from '../server/accounts.js';
import { accountObject, readContacts } from './account-object.js';
import type { AcmeContext, AcmeEndpoint } from './context.js';
import { acmeProblem } from './problem.js';
import { acmeJson } from './responses.js';

/** Orders listed per page of `account/{id}/orders`. */
export const ORDERS_PER_PAGE = 100;

async function owner(ctx: AcmeContext, id: string) {
  const auth = await ctx.authenticate();
  if (auth.account.id !== id) throw acmeProblem('unauthorized', 'the request is not signed by this account');
  return auth;
}

/**
 * POST /account/{id} (RFC 8555 §7.3.2, §7.3.6): POST-as-GET reads the account; a payload with
 * `contact` replaces the contacts; `{"status":"deactivated"}` deactivates it for good.
 * Other members are ignored, as RFC 8555 §7.3 lets a server do.
 */
export const account: AcmeEndpoint = async (ctx, { id }) => {
  const auth = await owner(ctx, id as string);
  let current = auth.account;
  const payload = auth.payload;
  if (payload !== undefined) {
    if (payload.status !== undefined) {
      if (payload.status !== 'deactivated') {
        throw acmeProblem('malformed', "an account's status can only be changed to 'deactivated'");
      }
      current = await ctx.authority.deactivateAccount(current.id);
    } else if (payload.contact !== undefined) {
      current = await ctx.authority.updateAccount(current.id, {
        contact: readContacts(payload.contact, ACME_MAX_CONTACTS),
      });
    }
  }
  return acmeJson(accountObject(current, ctx.links));
};

/**
 * POST-as-GET /account/{id}/orders (RFC 8555 §7.1.2.1): the account's order URLs, newest
 * first, {@link ORDERS_PER_PAGE} a page; `Link: rel="next"` names the next page.
 */
export const accountOrders: AcmeEndpoint = async (ctx, { id }) => {
  const auth = await owner(ctx, id as string);
  if (!auth.postAsGet) throw acmeProblem('malformed', 'the orders list is read with POST-as-GET');
  const pageText = new URL(ctx.request.url).searchParams.get('page') ?? '1';
  const page = /^[1-9][0-9]{0,5}$/.test(pageText) ? Number(pageText) : Number.NaN;
  if (!Number.isInteger(page)) throw acmeProblem('malformed', "'page' must be a positive integer");
  const { ids, total } = await ctx.authority.accountOrderIds(auth.account.id, page, ORDERS_PER_PAGE);
  const more = page * ORDERS_PER_PAGE < total;
  return acmeJson(
    { orders: ids.map((order) => ctx.links.order(order)) },
    more
      ? { links: [{ url: `${ctx.links.accountOrders(auth.account.id)}?page=${page + 1}`, rel: 'next' }] }
      : {},
  );
};
