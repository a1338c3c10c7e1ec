import {
  POLICY_RULE_TYPES,
  policyRuleCreateSchema,
  policyRuleListSchema,
  policyRuleUpdateSchema,
  SEVERITIES,
  type Services,
  violationListSchema,
} from '@certwright/core';
import { z } from 'zod';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { crudRoutes, envelope, idParams, pageOf, timestamp } from './crud.js';

export const policyRuleJson = z.object({
  id: z.string(),
  name: z.string(),
  type: z.enum(POLICY_RULE_TYPES),
  severity: z.enum(SEVERITIES),
  config: z.unknown().describe("the type's config object, or null"),
  enabled: z.boolean(),
  description: z.string().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

export const violationJson = z.object({
  id: z.string(),
  rule_id: z.string(),
  rule_type: z.enum(POLICY_RULE_TYPES),
  certificate_id: z.string(),
  severity: z.enum(SEVERITIES),
  message: z.string(),
  detected_at: timestamp,
});

const evaluationJson = z.object({
  evaluated: z.number().int().describe('certificates evaluated'),
  violations: z.number().int().describe('violations now recorded'),
  skipped: z.number().int().describe('rule evaluations skipped (malformed config, no version data); logged'),
});

/** /api/v1/policies (policy rules) and /api/v1/violations. */
export function policyRoutes(services: Services): RouteSpec[] {
  const evaluate = defineRoute({
    method: 'POST',
    path: '/api/v1/policies/evaluate',
    operationId: 'evaluatePolicies',
    permission: 'policy.write',
    summary: 'Evaluate every enabled rule against every certificate and replace the stored violations',
    tags: ['policies'],
    responses: { 200: { description: 'counts of the run', schema: evaluationJson } },
    handle: async () => ({ status: 200, body: await services.policyEvaluation.evaluateAll() }),
  });
  return [
    ...crudRoutes({
      permissions: { read: 'policy.read', write: 'policy.write' },
      path: '/api/v1/policies',
      tag: 'policies',
      name: 'PolicyRule',
      noun: 'policy rule',
      record: policyRuleJson,
      createBody: policyRuleCreateSchema,
      updateBody: policyRuleUpdateSchema,
      listQuery: policyRuleListSchema,
      service: services.policyRules,
      before: [evaluate],
      deleteNote: 'its violations are deleted with it',
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/violations',
      operationId: 'listViolations',
      permission: 'policy.read',
      summary: 'List policy violations',
      tags: ['policies'],
      query: violationListSchema,
      responses: { 200: { description: 'one page of violations', schema: envelope(violationJson) } },
      handle: async ({ query }) => ({
        status: 200,
        body: pageOf(await services.violations.list(query), (v) => v),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/violations/{id}',
      operationId: 'getViolation',
      permission: 'policy.read',
      summary: 'Get one policy violation',
      tags: ['policies'],
      params: idParams,
      responses: {
        200: { description: 'the violation', schema: violationJson },
        404: { description: 'unknown id' },
      },
      handle: async ({ params }) => ({ status: 200, body: await services.violations.get(params.id) }),
    }),
  ];
}
