import { ownerCreateSchema, ownerListSchema, ownerUpdateSchema, type Services } from '@certwright/core';
import { z } from 'zod';
import type { RouteSpec } from '../http/route.js';
import { crudRoutes, timestamp } from './crud.js';

export const ownerJson = z.object({
  id: z.string(),
  name: z.string(),
  email: z.string().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

/** /api/v1/owners. */
export function ownerRoutes(services: Services): RouteSpec[] {
  return crudRoutes({
    permissions: { read: 'owner.read', write: 'owner.write' },
    path: '/api/v1/owners',
    tag: 'owners',
    name: 'Owner',
    noun: 'owner',
    record: ownerJson,
    createBody: ownerCreateSchema,
    updateBody: ownerUpdateSchema,
    listQuery: ownerListSchema,
    service: services.owners,
    deleteNote: '409 while certificates reference it',
  });
}
