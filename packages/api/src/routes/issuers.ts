import {
  ISSUER_TYPES,
  type Issuer,
  type IssuerCreated,
  issuerCreateSchema,
  issuerListSchema,
  issuerUpdateSchema,
  type Services,
} from '@certwright/core';
import { z } from 'zod';
import { actorOf } from '../auth/principal.js';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { crudRoutes, timestamp } from './crud.js';

/** No `config`: it may hold credentials and is write-only. */
export const issuerJson = z.object({
  id: z.string(),
  name: z.string(),
  type: z.enum(ISSUER_TYPES),
  enabled: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
});

/** The create answer: the record, plus the root key when the request asked for it. */
export const issuerCreatedJson = issuerJson.extend({
  root_private_key_pem: z
    .string()
    .optional()
    .describe(
      "Only with root_private_key 'return': the generated root CA's private key (PKCS#8 PEM). Returned by this answer alone and never stored: keep it offline",
    ),
  root_certificate_pem: z
    .string()
    .optional()
    .describe("Only with root_private_key 'return': the root CA certificate (PEM) the key belongs to"),
});

/** Fields picked one by one, so a field added to the record later never leaks by default. */
export const issuerView = (i: Issuer) => ({
  id: i.id,
  name: i.name,
  type: i.type,
  enabled: i.enabled,
  created_at: i.created_at,
  updated_at: i.updated_at,
});

const issuerCreatedView = (i: IssuerCreated) => ({
  ...issuerView(i),
  ...(i.root_private_key_pem !== undefined
    ? { root_private_key_pem: i.root_private_key_pem, root_certificate_pem: i.root_certificate_pem }
    : {}),
});

/** /api/v1/issuers; config is write-only. */
export function issuerRoutes(services: Services): RouteSpec[] {
  const routes = crudRoutes({
    path: '/api/v1/issuers',
    tag: 'issuers',
    name: 'Issuer',
    noun: 'issuer',
    record: issuerJson,
    createBody: issuerCreateSchema,
    updateBody: issuerUpdateSchema,
    listQuery: issuerListSchema,
    service: services.issuers,
    view: issuerView,
    deleteNote: '409 while certificates or versions reference it',
    // Issuer config carries credentials and CA keys (a CA import is an issuer write).
    permissions: { read: 'issuer.read', write: 'issuer.write' },
  });
  // The create answer alone may carry the root key handed over for offline storage.
  const create = defineRoute({
    method: 'POST',
    path: '/api/v1/issuers',
    operationId: 'createIssuer',
    permission: 'issuer.write',
    summary:
      "Create an issuer; with root_private_key 'return' a Local CA is generated now and its root key answered once",
    tags: ['issuers'],
    body: issuerCreateSchema,
    responses: {
      201: { description: 'the issuer created', schema: issuerCreatedJson },
      409: { description: 'a unique value is taken' },
    },
    handle: async ({ body, principal }) => {
      const created = await services.issuers.create(actorOf(principal), body);
      return {
        status: 201,
        body: issuerCreatedView(created),
        // A private key must not linger in a cache between here and the caller.
        ...(created.root_private_key_pem !== undefined ? { headers: { 'cache-control': 'no-store' } } : {}),
      };
    },
  });
  return routes.map((route) => (route.operationId === 'createIssuer' ? create : route));
}
