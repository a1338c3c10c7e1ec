import {
  deploymentTargetSchema,
  jobSchema,
  type Services,
  targetCreateSchema,
  targetListSchema,
  targetUpdateSchema,
  targetViewSchema,
} from '@certwright/core';
import { actorOf } from '../auth/principal.js';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { envelope, idParams } from './crud.js';

/** Deployment targets. Config goes in; it comes out of the single-target answers with every secret masked. */
export function targetRoutes(services: Services): RouteSpec[] {
  const targets = services.targets;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/targets',
      operationId: 'listTargets',
      permission: 'target.read',
      summary: 'Deployment targets',
      tags: ['targets'],
      query: targetListSchema,
      responses: { 200: { description: 'targets', schema: envelope(deploymentTargetSchema) } },
      handle: async ({ query }) => ({ status: 200, body: await targets.list(query) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/targets',
      operationId: 'createTarget',
      permission: 'target.write',
      summary: 'Create a target for an existing agent (agent_id, name and type required)',
      tags: ['targets'],
      body: targetCreateSchema,
      responses: { 201: { description: 'created, its config masked', schema: targetViewSchema } },
      handle: async ({ body, principal }) => ({
        status: 201,
        body: await targets.create(actorOf(principal), body),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/targets/{id}',
      operationId: 'getTarget',
      permission: 'target.read',
      summary: 'One target with its config, every secret value (password, token, private key …) masked',
      tags: ['targets'],
      params: idParams,
      responses: { 200: { description: 'the target', schema: targetViewSchema } },
      handle: async ({ params }) => ({ status: 200, body: await targets.view(params.id) }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/v1/targets/{id}',
      operationId: 'updateTarget',
      permission: 'target.write',
      summary: 'Change name, type, enabled or config of an unretired target',
      tags: ['targets'],
      params: idParams,
      body: targetUpdateSchema,
      responses: { 200: { description: 'updated, its config masked', schema: targetViewSchema } },
      handle: async ({ params, body, principal }) => ({
        status: 200,
        body: await targets.update(actorOf(principal), params.id, body),
      }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/v1/targets/{id}',
      operationId: 'deleteTarget',
      permission: 'target.write',
      summary: 'Delete a target no certificate or job references',
      tags: ['targets'],
      params: idParams,
      responses: { 204: { description: 'deleted' }, 409: { description: 'still referenced' } },
      handle: async ({ params, principal }) => {
        await targets.delete(actorOf(principal), params.id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/targets/{id}/test',
      operationId: 'testTarget',
      permission: 'target.write',
      summary:
        "Connection test: a Validation job for the target's agent; read the result at /api/v1/jobs/{job id}",
      tags: ['targets'],
      params: idParams,
      responses: { 202: { description: 'test job created', schema: jobSchema } },
      handle: async ({ params, principal }) => {
        const job = await targets.requestConnectionTest(actorOf(principal), params.id);
        return {
          status: 202,
          body: job,
          headers: { location: `/api/v1/jobs/${encodeURIComponent(job.id)}` },
        };
      },
    }),
  ];
}
