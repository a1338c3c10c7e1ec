import { jobListSchema, jobSchema, type Services, verificationStatusSchema } from '@certwright/core';
import { z } from 'zod';
import { actorOf } from '../auth/principal.js';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { envelope, idParams } from './crud.js';

const verificationSchema = z.object({
  job_id: z.string(),
  status: verificationStatusSchema,
  detail: z.string().nullable(),
  verified_at: z.date().nullable(),
  validation_job_id: z.string().nullable(),
});

/** Jobs: list, get, cancel, deployment verification. */
export function jobRoutes(services: Services): RouteSpec[] {
  const jobs = services.jobs;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/jobs',
      operationId: 'listJobs',
      permission: 'job.read',
      summary: 'Jobs, newest first; status takes a comma-separated list',
      tags: ['jobs'],
      query: jobListSchema,
      responses: { 200: { description: 'jobs', schema: envelope(jobSchema) } },
      handle: async ({ query }) => ({ status: 200, body: await jobs.list(query) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/jobs/{id}',
      operationId: 'getJob',
      permission: 'job.read',
      summary: 'One job, with its result and last_error',
      tags: ['jobs'],
      params: idParams,
      responses: { 200: { description: 'the job', schema: jobSchema } },
      handle: async ({ params }) => ({ status: 200, body: await jobs.get(params.id) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/jobs/{id}/cancel',
      operationId: 'cancelJob',
      permission: 'job.write',
      summary: 'Cancel an open job (409 once it ended)',
      tags: ['jobs'],
      params: idParams,
      responses: {
        200: { description: 'cancelled', schema: jobSchema },
        409: { description: 'already ended' },
      },
      handle: async ({ params, principal }) => ({
        status: 200,
        body: await jobs.cancel(actorOf(principal), params.id),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/jobs/{id}/verify',
      operationId: 'verifyJob',
      permission: 'job.write',
      summary: 'Trigger verification of a completed deployment',
      tags: ['jobs'],
      params: idParams,
      responses: {
        202: { description: 'verification pending (or skipped)', schema: verificationSchema },
        409: { description: 'not a Deployment job, or still open' },
      },
      handle: async ({ params, principal }) => ({
        status: 202,
        body: await jobs.requestVerification(actorOf(principal), params.id),
        headers: { location: `/api/v1/jobs/${encodeURIComponent(params.id)}/verification` },
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/jobs/{id}/verification',
      operationId: 'getJobVerification',
      permission: 'job.read',
      summary: 'Verification result: pending, success, failed or skipped',
      tags: ['jobs'],
      params: idParams,
      responses: {
        200: { description: 'verification', schema: verificationSchema },
        404: { description: 'unknown job, or no verification requested' },
      },
      handle: async ({ params }) => ({ status: 200, body: await jobs.getVerification(params.id) }),
    }),
  ];
}
