import {
  type Agent,
  agentCsrSchema,
  agentHeartbeatSchema,
  agentJobReportSchema,
  agentListSchema,
  agentRegistrationSchema,
  agentRetireSchema,
  agentSchema,
  CertwrightError,
  isSentinelAgentId,
  jobSchema,
  type Services,
} from '@certwright/core';
import { z } from 'zod';
import { actorOf, bearerToken } from '../auth/principal.js';
import { defineRoute, type RouteInput, type RouteSpec } from '../http/route.js';
import { envelope, idParams } from './crud.js';

/**
 * Routes an agent key may call; every other route answers 403 to an agent principal
 * (enforced in createHandler). Each of them also checks that the key is the path's agent.
 */
export const AGENT_OPERATION_IDS: ReadonlySet<string> = new Set([
  'agentHeartbeat',
  'agentWork',
  'agentSubmitCsr',
  'agentReportJob',
  // The host discovery report (routes/discovery.ts).
  'agentReportDiscoveries',
]);

const jobParams = z.object({ id: z.string().min(1).max(128), job_id: z.string().min(1).max(128) });

/** The agent as the API shows it: the record, and whether the server itself runs it. */
const agentViewSchema = agentSchema.extend({
  built_in: z
    .boolean()
    .describe('run by the server itself (its scanner, the cloud discovery sources): never retired'),
});
const view = (agent: Agent) => ({ ...agent, built_in: isSentinelAgentId(agent.id) });
const viewPage = <P extends { data: Agent[] }>(page: P) => ({ ...page, data: page.data.map(view) });

const registeredSchema = agentViewSchema.extend({
  api_key: z.string().describe('shown once; only its SHA-256 is stored'),
});

const workItemSchema = z.object({
  job: jobSchema,
  target: z
    .object({ id: z.string(), name: z.string(), type: z.string(), config: z.record(z.string(), z.unknown()) })
    .nullable(),
  certificate: z
    .object({
      version_id: z.string(),
      serial_number: z.string(),
      cert_pem: z.string(),
      chain_pem: z.string(),
      private_key_pem: z.string().nullable(),
    })
    .nullable(),
});

/**
 * Agent routes. Literal paths precede `{id}` paths because the router
 * takes the first match: `/api/v1/agents/retired` must never reach `/api/v1/agents/{id}`.
 */
export function agentRoutes(services: Services): RouteSpec[] {
  const agents = services.agents;

  /**
   * The agent behind the request's bearer key, which must be the path's agent. This runs in
   * the route, not only in the authenticator, so that with SVC_AUTH_TYPE=none an agent is
   * still identified by its key. A missing or unknown key is 401 with no hint; the admin key
   * or another agent's key is 403; a retired agent is 410.
   */
  const callingAgent = async (input: RouteInput<{ id: string }, unknown, unknown>): Promise<Agent> => {
    const token = bearerToken(input.request.headers.get('authorization'));
    const agent = token ? await agents.authenticate(token) : null;
    if (!agent) {
      if (input.principal?.kind === 'api-key') {
        throw new CertwrightError('forbidden', "this route takes the agent's own key");
      }
      throw new CertwrightError('unauthorized', 'a valid agent key is required');
    }
    if (agent.id !== input.params.id)
      throw new CertwrightError('forbidden', 'an agent may act only for itself');
    if (agent.retired_at !== null) throw new CertwrightError('gone', `agent '${agent.id}' is retired`);
    return agent;
  };

  return [
    defineRoute({
      method: 'POST',
      path: '/api/v1/agents',
      operationId: 'registerAgent',
      permission: 'agent.register',
      summary: 'Register an agent; the response carries its API key once',
      tags: ['agents'],
      body: agentRegistrationSchema,
      responses: { 201: { description: 'registered', schema: registeredSchema } },
      handle: async ({ body, principal }) => {
        const { agent, api_key } = await agents.register(actorOf(principal), body);
        return { status: 201, body: { ...view(agent), api_key }, headers: { 'cache-control': 'no-store' } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/agents',
      operationId: 'listAgents',
      permission: 'agent.read',
      summary: 'Active (unretired) agents, newest first',
      tags: ['agents'],
      query: agentListSchema,
      responses: { 200: { description: 'agents', schema: envelope(agentViewSchema) } },
      handle: async ({ query }) => ({ status: 200, body: viewPage(await agents.list(query)) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/agents/retired',
      operationId: 'listRetiredAgents',
      permission: 'agent.read',
      summary: 'Retired agents; page < 1 becomes 1, per_page < 1 becomes 50',
      tags: ['agents'],
      query: agentListSchema,
      responses: { 200: { description: 'retired agents', schema: envelope(agentViewSchema) } },
      handle: async ({ query }) => ({ status: 200, body: viewPage(await agents.listRetired(query)) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/agents/{id}',
      operationId: 'getAgent',
      permission: 'agent.read',
      summary: 'One agent',
      tags: ['agents'],
      params: idParams,
      responses: { 200: { description: 'the agent', schema: agentViewSchema } },
      handle: async ({ params }) => ({ status: 200, body: view(await agents.get(params.id)) }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/v1/agents/{id}',
      operationId: 'retireAgent',
      permission: 'agent.retire',
      summary: 'Retire an agent: 200 retired, 204 already retired, 409 with counts',
      tags: ['agents'],
      params: idParams,
      query: agentRetireSchema,
      responses: {
        200: { description: 'retired by this call', schema: agentViewSchema },
        204: { description: 'already retired; nothing changed' },
        403: { description: 'sentinel agent (even with force), or not admin' },
        404: { description: 'unknown agent' },
        409: {
          description:
            'active dependencies without force; body has error, active_targets, active_certificates, pending_jobs',
        },
      },
      handle: async ({ params, query, principal }) => {
        const outcome = await agents.retire(actorOf(principal), params.id, query);
        if (!outcome.changed) return { status: 204 };
        return { status: 200, body: view(outcome.agent) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/agents/{id}/heartbeat',
      operationId: 'agentHeartbeat',
      permission: 'agent.self',
      summary: "Heartbeat with the agent's own key; 410 once the agent is retired",
      tags: ['agents'],
      params: idParams,
      body: agentHeartbeatSchema.optional(),
      responses: {
        200: { description: 'recorded', schema: agentViewSchema },
        403: { description: "not this agent's key" },
        410: { description: 'the agent is retired; it should shut down' },
      },
      handle: async (input) => {
        const agent = await callingAgent(input);
        return { status: 200, body: view(await agents.heartbeat(agent.id, input.body ?? {})) };
      },
    }),
    defineRoute({
      // POST: a poll claims jobs (they become Running under a lease), so a HEAD, a prefetch or
      // a retrying cache must never reach it. GET answers 405 with `Allow: POST`.
      method: 'POST',
      path: '/api/v1/agents/{id}/work',
      operationId: 'agentWork',
      permission: 'agent.self',
      summary: "The agent's work poll: claims its due jobs and lists jobs awaiting its CSR",
      tags: ['agents'],
      params: idParams,
      responses: {
        200: {
          description: 'work',
          schema: z.object({ jobs: z.array(workItemSchema), awaiting_csr: z.array(jobSchema) }),
        },
        403: { description: "not this agent's key" },
        410: { description: 'the agent is retired' },
      },
      handle: async (input) => {
        const agent = await callingAgent(input);
        return { status: 200, body: await agents.work(agent.id), headers: { 'cache-control': 'no-store' } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/agents/{id}/jobs/{job_id}/csr',
      operationId: 'agentSubmitCsr',
      permission: 'agent.self',
      summary: 'Submit the CSR for an AwaitingCSR job; the job becomes Pending',
      tags: ['agents'],
      params: jobParams,
      body: agentCsrSchema,
      responses: {
        200: { description: 'accepted', schema: jobSchema },
        404: { description: 'no such job of this agent' },
        409: { description: 'the job is not AwaitingCSR' },
      },
      handle: async (input) => {
        const agent = await callingAgent(input);
        return {
          status: 200,
          body: await services.jobs.submitCsr(agent.id, input.params.job_id, input.body.csr_pem),
        };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/agents/{id}/jobs/{job_id}/status',
      operationId: 'agentReportJob',
      permission: 'agent.self',
      summary: 'Report progress (Running) or the outcome (Completed, Failed) of a job',
      tags: ['agents'],
      params: jobParams,
      body: agentJobReportSchema,
      responses: {
        200: { description: 'recorded', schema: jobSchema },
        404: { description: 'no such job of this agent' },
        403: { description: 'an Issuance or Renewal job: the server completes those itself' },
        409: { description: 'the job already ended (e.g. it was cancelled)' },
      },
      handle: async (input) => {
        const agent = await callingAgent(input);
        return {
          status: 200,
          body: await services.jobs.reportFromAgent(agent.id, input.params.job_id, input.body),
        };
      },
    }),
  ];
}
