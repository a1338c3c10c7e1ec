import {
  renewalPolicyCreateSchema,
  renewalPolicyListSchema,
  renewalPolicyUpdateSchema,
  type Services,
} from '@certwright/core';
import { z } from 'zod';
import type { RouteSpec } from '../http/route.js';
import { crudRoutes, timestamp } from './crud.js';

export const renewalPolicyJson = z.object({
  id: z.string().describe('rp-<slug of name> unless given'),
  name: z.string(),
  renewal_window_days: z.number().int(),
  max_retries: z.number().int().nullable().describe('null when never set (no default)'),
  retry_interval_seconds: z.number().int(),
  alert_thresholds_days: z.array(z.number().int()),
  created_at: timestamp,
  updated_at: timestamp,
});

/** /api/v1/renewal-policies. */
export function renewalPolicyRoutes(services: Services): RouteSpec[] {
  return crudRoutes({
    permissions: { read: 'renewal_policy.read', write: 'renewal_policy.write' },
    path: '/api/v1/renewal-policies',
    tag: 'renewal-policies',
    name: 'RenewalPolicy',
    noun: 'renewal policy',
    record: renewalPolicyJson,
    createBody: renewalPolicyCreateSchema,
    updateBody: renewalPolicyUpdateSchema,
    listQuery: renewalPolicyListSchema,
    service: services.renewalPolicies,
    deleteNote: '409 while certificates reference it',
  });
}
