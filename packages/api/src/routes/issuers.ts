import {
  ISSUER_TYPES,
  type Issuer,
  issuerCreateSchema,
  issuerListSchema,
  issuerUpdateSchema,
  type Services,
} from '@certwright/core';
import { z } from 'zod';
import type { RouteSpec } from '../http/route.js';
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

/** Fields picked one by one, so a field added to the record later never leaks by default. */
export const issuerView = (i: Issuer) => ({
  id: i.id,
  name: i.name,
  type: i.type,
  enabled: i.enabled,
  created_at: i.created_at,
  updated_at: i.updated_at,
});

/** /api/v1/issuers (DESIGN §5); config is write-only. */
export function issuerRoutes(services: Services): RouteSpec[] {
  return crudRoutes({
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
    adminWrites: true,
  });
}
