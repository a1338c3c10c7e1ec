import {
  healthCheckCreateSchema,
  healthCheckListSchema,
  healthCheckResultSchema,
  healthCheckSchema,
  healthCheckUpdateSchema,
  pageQuerySchema,
  type Services,
} from '@certwright/core';
import { z } from 'zod';
import { actorOf } from '../auth/principal.js';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { envelope, idParams } from './crud.js';

const summarySchema = z.object({
  total: z.number().int(),
  by_status: z.record(z.string(), z.number().int()),
  unacknowledged: z.number().int(),
});

/**
 * TLS endpoint health checks: list, create, summary, read, update, delete, history,
 * acknowledge. A check's host is a destination the server connects to, so create, update and
 * delete are admin-only.
 */
export function healthCheckRoutes(services: Services): RouteSpec[] {
  const checks = services.healthChecks;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/health-checks',
      operationId: 'listHealthChecks',
      permission: 'healthcheck.read',
      summary: 'TLS endpoint health checks',
      tags: ['health-checks'],
      query: healthCheckListSchema,
      responses: { 200: { description: 'checks', schema: envelope(healthCheckSchema) } },
      handle: async ({ query }) => ({ status: 200, body: await checks.list(query) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/health-checks',
      operationId: 'createHealthCheck',
      permission: 'healthcheck.write',
      summary:
        'Watch an endpoint (name, host, port, expected_fingerprint or certificate_id); checked at once',
      tags: ['health-checks'],
      body: healthCheckCreateSchema,
      responses: { 201: { description: 'created and checked', schema: healthCheckSchema } },
      handle: async ({ body, principal }) => ({
        status: 201,
        body: await checks.create(actorOf(principal), body),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/health-checks/summary',
      operationId: 'healthCheckSummary',
      permission: 'healthcheck.read',
      summary: 'Checks by status and how many problems are unacknowledged',
      tags: ['health-checks'],
      responses: { 200: { description: 'summary', schema: summarySchema } },
      handle: async () => ({ status: 200, body: await checks.summary() }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/health-checks/{id}',
      operationId: 'getHealthCheck',
      permission: 'healthcheck.read',
      summary: 'One health check with its last observation',
      tags: ['health-checks'],
      params: idParams,
      responses: { 200: { description: 'the check', schema: healthCheckSchema } },
      handle: async ({ params }) => ({ status: 200, body: await checks.get(params.id) }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/v1/health-checks/{id}',
      operationId: 'updateHealthCheck',
      permission: 'healthcheck.write',
      summary: 'Change a health check; it is checked again at the next tick',
      tags: ['health-checks'],
      params: idParams,
      body: healthCheckUpdateSchema,
      responses: { 200: { description: 'updated', schema: healthCheckSchema } },
      handle: async ({ params, body, principal }) => ({
        status: 200,
        body: await checks.update(actorOf(principal), params.id, body),
      }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/v1/health-checks/{id}',
      operationId: 'deleteHealthCheck',
      permission: 'healthcheck.write',
      summary: 'Delete a health check and its history',
      tags: ['health-checks'],
      params: idParams,
      responses: { 204: { description: 'deleted' } },
      handle: async ({ params, principal }) => {
        await checks.delete(actorOf(principal), params.id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/health-checks/{id}/history',
      operationId: 'healthCheckHistory',
      permission: 'healthcheck.read',
      summary: 'Check results, newest first',
      tags: ['health-checks'],
      params: idParams,
      query: pageQuerySchema,
      responses: { 200: { description: 'results', schema: envelope(healthCheckResultSchema) } },
      handle: async ({ params, query }) => ({ status: 200, body: await checks.history(params.id, query) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/health-checks/{id}/acknowledge',
      operationId: 'acknowledgeHealthCheck',
      permission: 'healthcheck.acknowledge',
      summary: 'Acknowledge the current state; cleared by the next transition',
      tags: ['health-checks'],
      params: idParams,
      responses: { 200: { description: 'acknowledged', schema: healthCheckSchema } },
      handle: async ({ params, principal }) => ({
        status: 200,
        body: await checks.acknowledge(actorOf(principal), params.id),
      }),
    }),
  ];
}
