import { isCertwrightError } from '@certwright/core';
import { parsePublicJwk } from '@certwright/core/pki';
import { accountObject, takenBy } from './account-object.js';
import type { AcmeEndpoint } from './context.js';
import { jwsPayloadObject, parseJwsObject, verifyJws } from './jws.js';
import { acmeProblem } from './problem.js';
import { acmeJson } from './responses.js';

/**
 * POST /key-change (RFC 8555 §7.3.5). The outer JWS is signed by the account's current key
 * (`kid`); its payload is an inner JWS signed by the new key (`jwk`, same `url`) whose payload
 * is `{account, oldKey}`: `account` must be the outer `kid`, `oldKey` the current key. The swap
 * is atomic; a new key that already has an account is 409 with that account's Location, and a
 * rollover that lost a race is 409 too.
 */
export const keyChange: AcmeEndpoint = async (ctx) => {
  const auth = await ctx.authenticate();
  if (auth.payload === undefined)
    throw acmeProblem('malformed', 'key-change needs the inner JWS as its payload');
  const inner = parseJwsObject(auth.payload, 'key-change');
  if (inner.header.url !== auth.jws.header.url) {
    throw acmeProblem('malformed', "the inner JWS 'url' differs from the outer one");
  }
  const newKey = inner.header.jwk!;
  await verifyJws(inner, newKey);
  const payload = jwsPayloadObject(inner);
  if (
    payload === undefined ||
    typeof payload.account !== 'string' ||
    payload.account !== auth.jws.header.kid
  ) {
    throw acmeProblem('malformed', "the inner payload's 'account' must be the outer 'kid'");
  }
  let oldThumbprint: string;
  try {
    oldThumbprint = parsePublicJwk(payload.oldKey).thumbprint;
  } catch (error) {
    if (isCertwrightError(error))
      throw acmeProblem('malformed', "the inner payload's 'oldKey' is not a public JWK");
    throw error;
  }
  if (oldThumbprint !== auth.account.jwk_thumbprint) {
    throw acmeProblem('malformed', "'oldKey' is not the account's current key");
  }
  try {
    const updated = await ctx.authority.changeAccountKey(auth.account.id, { oldThumbprint, jwk: newKey.jwk });
    return acmeJson(accountObject(updated, ctx.links));
  } catch (error) {
    const holder = takenBy(error);
    if (holder) {
      throw acmeProblem('malformed', 'the new key already belongs to an account', {
        status: 409,
        headers: { location: ctx.links.account(holder) },
      });
    }
    throw error;
  }
};
