import { ACME_ACCOUNT_STATUSES, type AcmeAccount, type Services } from '@certwright/core';
import { acmeAccountListSchema } from '@certwright/protocols/acme';
import { z } from 'zod';
import { actorOf } from '../auth/principal.js';
import { defineRoute, type RouteSpec } from '../http/route.js';
import type { ProtocolServers } from '../protocols/servers.js';
import { envelope, idParams, pageOf, timestamp } from './crud.js';

/**
 * The ACME server's accounts (RFC 8555 §7.1.2) for administrators: read them and deactivate
 * one (§7.3.6) when its key must sign nothing more. Accounts are opened and changed by their
 * clients over ACME itself (docs/protocols/acme.md); the key is shown only as its RFC 7638
 * thumbprint, which is what `certbot show_account` and similar clients print.
 */

const PATH = '/api/v1/acme/accounts';
const TAG = 'acme';

export const acmeAccountJson = z.object({
  id: z.string().describe('the account id: the last segment of its ACME account URL (kid)'),
  profile_id: z.string(),
  status: z.enum(ACME_ACCOUNT_STATUSES),
  contact: z.array(z.string()).describe('mailto: URIs the client registered'),
  key_thumbprint: z.string().describe('RFC 7638 SHA-256 thumbprint of the account key, base64url'),
  terms_agreed: z.boolean(),
  eab_key_id: z.string().nullable().describe('the external account binding key it was opened with'),
  created_at: timestamp,
  updated_at: timestamp,
});

const detailJson = acmeAccountJson.extend({
  orders: z.number().int().min(0).describe('orders the account placed, whatever their status'),
  certificates: z.number().int().min(0).describe('orders that issued a certificate'),
});

// Fields picked one by one: the stored JWK and the client's address stay out of the answer.
const view = (a: AcmeAccount) => ({
  id: a.id,
  profile_id: a.profile_id,
  status: a.status,
  contact: a.contact,
  key_thumbprint: a.jwk_thumbprint,
  terms_agreed: a.terms_agreed,
  eab_key_id: a.eab_key_id,
  created_at: a.created_at,
  updated_at: a.updated_at,
});

export function acmeAccountRoutes(_services: Services, { acme }: ProtocolServers): RouteSpec[] {
  const accounts = acme.accounts;
  return [
    defineRoute({
      method: 'GET',
      path: PATH,
      operationId: 'listAcmeAccounts',
      permission: 'acme.account.read',
      summary: 'List ACME accounts, newest first; filter by profile and status',
      tags: [TAG],
      query: acmeAccountListSchema,
      responses: { 200: { description: 'one page of ACME accounts', schema: envelope(acmeAccountJson) } },
      handle: async ({ query }) => ({ status: 200, body: pageOf(await accounts.list(query), view) }),
    }),
    defineRoute({
      method: 'GET',
      path: `${PATH}/{id}`,
      operationId: 'getAcmeAccount',
      permission: 'acme.account.read',
      summary: 'Get one ACME account with the number of its orders and issued certificates',
      tags: [TAG],
      params: idParams,
      responses: {
        200: { description: 'the account', schema: detailJson },
        404: { description: 'unknown id' },
      },
      handle: async ({ params }) => {
        const [account, activity] = await Promise.all([
          accounts.get(params.id),
          accounts.activity(params.id),
        ]);
        return { status: 200, body: { ...view(account), ...activity } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: `${PATH}/{id}/deactivate`,
      operationId: 'deactivateAcmeAccount',
      permission: 'acme.account.write',
      summary:
        'Deactivate an ACME account as its client can (RFC 8555 §7.3.6): final; its pending orders become invalid. A deactivated account answers unchanged',
      tags: [TAG],
      params: idParams,
      responses: {
        200: { description: 'the account, deactivated', schema: acmeAccountJson },
        404: { description: 'unknown id' },
        410: { description: 'the account is revoked' },
      },
      handle: async ({ params, principal }) => ({
        status: 200,
        body: view(await accounts.deactivateAccount(params.id, actorOf(principal))),
      }),
    }),
  ];
}
