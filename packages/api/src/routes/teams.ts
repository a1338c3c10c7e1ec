import { type Services, teamCreateSchema, teamListSchema, teamUpdateSchema } from '@certwright/core';
import { z } from 'zod';
import type { RouteSpec } from '../http/route.js';
import { crudRoutes, timestamp } from './crud.js';

export const teamJson = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

/** /api/v1/teams. */
export function teamRoutes(services: Services): RouteSpec[] {
  return crudRoutes({
    permissions: { read: 'team.read', write: 'team.write' },
    path: '/api/v1/teams',
    tag: 'teams',
    name: 'Team',
    noun: 'team',
    record: teamJson,
    createBody: teamCreateSchema,
    updateBody: teamUpdateSchema,
    listQuery: teamListSchema,
    service: services.teams,
    deleteNote: '409 while certificates reference it',
  });
}
