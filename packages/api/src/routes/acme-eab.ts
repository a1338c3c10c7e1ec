import type { AcmeEabKey, Services } from '@certwright/core';
import { eabKeyCreateSchema, eabKeyListSchema } from '@certwright/protocols/acme';
import { z } from 'zod';
import { actorOf } from '../auth/principal.js';
import { defineRoute, type RouteSpec } from '../http/route.js';
import type { ProtocolServers } from '../protocols/servers.js';
import { envelope, idParams, pageOf, timestamp } from './crud.js';

/**
 * External account binding keys of the ACME server (RFC 8555 §7.3.4), admin only: the HMAC
 * key is shown once, in the answer that creates it, and never again (docs/protocols/acme.md).
 */

const PATH = '/api/v1/acme/eab-keys';
const TAG = 'acme';

export const eabKeyJson = z.object({
  id: z.string().describe('the EAB key id: what a client passes as --eab-kid'),
  profile_id: z.string(),
  name: z.string(),
  account_id: z.string().nullable().describe('the ACME account it bound, once used; a key binds one account'),
  bound_at: timestamp.nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

const view = (key: AcmeEabKey) => ({
  id: key.id,
  profile_id: key.profile_id,
  name: key.name,
  account_id: key.account_id,
  bound_at: key.bound_at,
  created_at: key.created_at,
  updated_at: key.updated_at,
});

export function acmeEabRoutes(_services: Services, { acme }: ProtocolServers): RouteSpec[] {
  const accounts = acme.accounts;
  return [
    defineRoute({
      method: 'GET',
      path: PATH,
      operationId: 'listAcmeEabKeys',
      permission: 'acme.eab.read',
      summary: 'List ACME external account binding keys (never their secrets)',
      tags: [TAG],
      query: eabKeyListSchema,
      responses: { 200: { description: 'one page of EAB keys', schema: envelope(eabKeyJson) } },
      handle: async ({ query }) => ({ status: 200, body: pageOf(await accounts.listEabKeys(query), view) }),
    }),
    defineRoute({
      method: 'POST',
      path: PATH,
      operationId: 'createAcmeEabKey',
      permission: 'acme.eab.write',
      summary: 'Create an ACME external account binding key; its HMAC key is shown only in this answer',
      tags: [TAG],
      body: eabKeyCreateSchema,
      responses: {
        201: {
          description: 'the key and, once, its secret',
          schema: eabKeyJson.extend({
            hmac_key: z.string().describe('base64url HMAC key (--eab-hmac-key); not retrievable later'),
          }),
        },
      },
      handle: async ({ body, principal }) => {
        const created = await accounts.createEabKey(actorOf(principal), body);
        return { status: 201, body: { ...view(created.key), hmac_key: created.hmac_key } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: `${PATH}/{id}`,
      operationId: 'getAcmeEabKey',
      permission: 'acme.eab.read',
      summary: 'Get one ACME external account binding key (without its secret)',
      tags: [TAG],
      params: idParams,
      responses: {
        200: { description: 'the key', schema: eabKeyJson },
        404: { description: 'unknown id' },
      },
      handle: async ({ params }) => ({ status: 200, body: view(await accounts.getEabKey(params.id)) }),
    }),
    defineRoute({
      method: 'DELETE',
      path: `${PATH}/{id}`,
      operationId: 'deleteAcmeEabKey',
      permission: 'acme.eab.write',
      summary: 'Delete an ACME external account binding key; an account it bound stays',
      tags: [TAG],
      params: idParams,
      responses: {
        204: { description: 'deleted' },
        404: { description: 'unknown id' },
      },
      handle: async ({ params, principal }) => {
        await accounts.deleteEabKey(actorOf(principal), params.id);
        return { status: 204 };
      },
    }),
  ];
}
