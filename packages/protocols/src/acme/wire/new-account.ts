import type { PlainResponse } from '@certwright/core';
import { ACME_MAX_CONTACTS } from '../server/accounts.js';
import { accountObject, readContacts, takenBy } from './account-object.js';
import type { ExternalAccountBinding } from './authority.js';
import type { AcmeContext, AcmeEndpoint } from './context.js';
import { type EabAlgorithm, parseJwsObject } from './jws.js';
import { acmeProblem } from './problem.js';
import { acmeJson } from './responses.js';

/**
 * POST /new-account (RFC 8555 §7.3), signed with the key in `jwk`:
 * - a key that has an account gets it back (200 + Location), deactivated ones `unauthorized`;
 * - `onlyReturnExisting` without an account is accountDoesNotExist;
 * - otherwise a new account (201 + Location), after the profile's rules: mailto: contacts,
 *   agreement to its terms, an external account binding (§7.3.4) when it requires one.
 */
export const newAccount: AcmeEndpoint = async (ctx) => {
  const auth = await ctx.authenticate({ key: 'jwk' });
  if (auth.payload === undefined) throw acmeProblem('malformed', 'new-account needs a payload');
  const payload = auth.payload;
  const { profile, links } = ctx;

  const existing = await ctx.authority.accountByKey(profile.id, auth.thumbprint);
  if (existing) return answerExisting(ctx, existing.id, existing.status);
  if (payload.onlyReturnExisting === true) {
    throw acmeProblem('accountDoesNotExist', 'no account exists for this key');
  }
  const contact = readContacts(payload.contact, ACME_MAX_CONTACTS);
  const agreed = payload.termsOfServiceAgreed;
  if (agreed !== undefined && typeof agreed !== 'boolean') {
    throw acmeProblem('malformed', "'termsOfServiceAgreed' must be a boolean");
  }
  if (profile.acme.terms_of_service_url && agreed !== true) {
    throw acmeProblem(
      'malformed',
      `the terms of service (${profile.acme.terms_of_service_url}) must be agreed to`,
    );
  }
  const binding = readBinding(ctx, payload.externalAccountBinding);
  if (profile.acme.eab_required && !binding) {
    throw acmeProblem('externalAccountRequired', 'this server requires an external account binding');
  }
  try {
    const account = await ctx.authority.createAccount({
      profileId: profile.id,
      jwk: auth.jwk,
      contact,
      termsAgreed: agreed === true,
      ...(binding ? { externalAccountBinding: binding } : {}),
      clientAddress: ctx.clientAddress,
    });
    return acmeJson(accountObject(account, links), { status: 201, location: links.account(account.id) });
  } catch (error) {
    // A concurrent request opened the account for this key first: answer as for an existing one.
    const winner = takenBy(error);
    if (winner) {
      const account = await ctx.authority.account(winner);
      if (account) return answerExisting(ctx, account.id, account.status);
    }
    throw error;
  }
};

async function answerExisting(ctx: AcmeContext, id: string, status: string): Promise<PlainResponse> {
  if (status !== 'valid') throw acmeProblem('unauthorized', `the account of this key is ${status}`);
  const account = await ctx.authority.account(id);
  if (!account) throw acmeProblem('accountDoesNotExist', 'no account exists for this key');
  return acmeJson(accountObject(account, ctx.links), { status: 200, location: ctx.links.account(id) });
}

/** RFC 8555 §7.3.4: a JWS MAC'd with the EAB key over the account key, for this very URL. */
function readBinding(ctx: AcmeContext, value: unknown): ExternalAccountBinding | undefined {
  if (value === undefined) return undefined;
  const jws = parseJwsObject(value, 'eab');
  if (jws.header.url !== ctx.url) {
    throw acmeProblem('malformed', "the external account binding's 'url' is not the new-account URL");
  }
  return {
    keyId: jws.header.kid as string,
    alg: jws.header.alg as EabAlgorithm,
    protected: jws.protected,
    payload: jws.payload,
    signature: jws.signature,
  };
}
