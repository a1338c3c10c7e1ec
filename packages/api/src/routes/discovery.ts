import {
  CertwrightError,
  claimSchema,
  discoveredCertificateSchema,
  discoveredListSchema,
  discoveryScanListSchema,
  discoveryScanSchema,
  hostReportSchema,
  type Services,
  scanTargetCreateSchema,
  scanTargetListSchema,
  scanTargetSchema,
  scanTargetUpdateSchema,
} from '@certwright/core';
import { z } from 'zod';
import { actorOf, bearerToken } from '../auth/principal.js';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { envelope, idParams } from './crud.js';

const summarySchema = z.object({
  total: z.number().int(),
  by_status: z.record(z.string(), z.number().int()),
  by_issuer: z.array(z.object({ issuer: z.string(), count: z.number().int() })),
  expiring: z.object({ days_7: z.number().int(), days_30: z.number().int(), days_90: z.number().int() }),
  expired: z.number().int(),
  unmanaged: z.number().int(),
  scans: z.object({ running: z.number().int(), last_completed_at: z.date().nullable() }),
});

/**
 * Network scan targets (`/api/v1/network-scan/targets…`), scans, discovered certificates and
 * the discovery summary (`/api/v1/discovery/…`), and an agent's host discovery report.
 * Creating, changing, deleting or running a scan target authorizes connections into internal
 * networks, so those routes are admin-only.
 */
export function discoveryRoutes(services: Services): RouteSpec[] {
  const discovery = services.discovery;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/network-scan/targets',
      operationId: 'listScanTargets',
      permission: 'scan.read',
      summary: 'Network scan targets',
      tags: ['discovery'],
      query: scanTargetListSchema,
      responses: { 200: { description: 'targets', schema: envelope(scanTargetSchema) } },
      handle: async ({ query }) => ({ status: 200, body: await discovery.listTargets(query) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/network-scan/targets',
      operationId: 'createScanTarget',
      permission: 'scan.write',
      summary: 'Create a scan target (name, cidrs or hosts, ports; at most 4096 addresses)',
      tags: ['discovery'],
      body: scanTargetCreateSchema,
      responses: { 201: { description: 'created', schema: scanTargetSchema } },
      handle: async ({ body, principal }) => ({
        status: 201,
        body: await discovery.createTarget(actorOf(principal), body),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/network-scan/targets/{id}',
      operationId: 'getScanTarget',
      permission: 'scan.read',
      summary: 'One scan target',
      tags: ['discovery'],
      params: idParams,
      responses: { 200: { description: 'the target', schema: scanTargetSchema } },
      handle: async ({ params }) => ({ status: 200, body: await discovery.getTarget(params.id) }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/v1/network-scan/targets/{id}',
      operationId: 'updateScanTarget',
      permission: 'scan.write',
      summary: 'Change a scan target',
      tags: ['discovery'],
      params: idParams,
      body: scanTargetUpdateSchema,
      responses: { 200: { description: 'updated', schema: scanTargetSchema } },
      handle: async ({ params, body, principal }) => ({
        status: 200,
        body: await discovery.updateTarget(actorOf(principal), params.id, body),
      }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/v1/network-scan/targets/{id}',
      operationId: 'deleteScanTarget',
      permission: 'scan.write',
      summary: 'Delete a scan target (its scans and findings stay)',
      tags: ['discovery'],
      params: idParams,
      responses: { 204: { description: 'deleted' } },
      handle: async ({ params, principal }) => {
        await discovery.deleteTarget(actorOf(principal), params.id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/network-scan/targets/{id}/scan',
      operationId: 'runScanTarget',
      permission: 'scan.write',
      summary: 'Scan a target now; 202 with the running scan (poll /api/v1/discovery/scans/{scan id})',
      tags: ['discovery'],
      params: idParams,
      responses: { 202: { description: 'scan started', schema: discoveryScanSchema } },
      handle: async ({ params, principal }) => {
        const { scan } = await discovery.startScan(actorOf(principal), params.id);
        return {
          status: 202,
          body: scan,
          headers: { location: `/api/v1/discovery/scans/${encodeURIComponent(scan.id)}` },
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/discovery/scans',
      operationId: 'listDiscoveryScans',
      permission: 'scan.read',
      summary: 'Discovery scans, newest first',
      tags: ['discovery'],
      query: discoveryScanListSchema,
      responses: { 200: { description: 'scans', schema: envelope(discoveryScanSchema) } },
      handle: async ({ query }) => ({ status: 200, body: await discovery.listScans(query) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/discovery/scans/{id}',
      operationId: 'getDiscoveryScan',
      permission: 'scan.read',
      summary: 'One scan with its counts and first errors',
      tags: ['discovery'],
      params: idParams,
      responses: { 200: { description: 'the scan', schema: discoveryScanSchema } },
      handle: async ({ params }) => ({ status: 200, body: await discovery.getScan(params.id) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/discovery/summary',
      operationId: 'discoverySummary',
      permission: 'scan.read',
      summary: 'Discovered certificates by status and issuer, expiring in 7/30/90 days, unmanaged',
      tags: ['discovery'],
      responses: { 200: { description: 'summary', schema: summarySchema } },
      handle: async () => ({ status: 200, body: await discovery.summary() }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/discovery/certificates',
      operationId: 'listDiscoveredCertificates',
      permission: 'scan.read',
      summary: 'Discovered certificates, soonest expiry first',
      tags: ['discovery'],
      query: discoveredListSchema,
      responses: { 200: { description: 'certificates', schema: envelope(discoveredCertificateSchema) } },
      handle: async ({ query }) => ({ status: 200, body: await discovery.listCertificates(query) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/discovery/certificates/{id}',
      operationId: 'getDiscoveredCertificate',
      permission: 'scan.read',
      summary: 'One discovered certificate with where it was seen',
      tags: ['discovery'],
      params: idParams,
      responses: { 200: { description: 'the certificate', schema: discoveredCertificateSchema } },
      handle: async ({ params }) => ({ status: 200, body: await discovery.getCertificate(params.id) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/discovery/certificates/{id}/claim',
      operationId: 'claimDiscoveredCertificate',
      permission: 'scan.triage',
      summary: 'Bring a discovered certificate under management (issuer_id, owner_id, team_id)',
      tags: ['discovery'],
      params: idParams,
      body: claimSchema,
      responses: { 200: { description: 'claimed', schema: discoveredCertificateSchema } },
      handle: async ({ params, body, principal }) => ({
        status: 200,
        body: await discovery.claim(actorOf(principal), params.id, body),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/discovery/certificates/{id}/dismiss',
      operationId: 'dismissDiscoveredCertificate',
      permission: 'scan.triage',
      summary: 'Dismiss a discovered certificate',
      tags: ['discovery'],
      params: idParams,
      responses: {
        200: { description: 'dismissed', schema: discoveredCertificateSchema },
        409: { description: 'the certificate is managed' },
      },
      handle: async ({ params, principal }) => ({
        status: 200,
        body: await discovery.dismiss(actorOf(principal), params.id),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/agents/{id}/discoveries',
      operationId: 'agentReportDiscoveries',
      permission: 'agent.self',
      summary: "An agent's host discovery report (certificate files found), with the agent's own key",
      tags: ['discovery'],
      params: idParams,
      body: hostReportSchema,
      responses: {
        201: { description: 'recorded as a scan', schema: discoveryScanSchema },
        403: { description: "not this agent's key" },
      },
      handle: async ({ params, body, request, principal }) => {
        const token = bearerToken(request.headers.get('authorization'));
        const agent = token ? await services.agents.authenticate(token) : null;
        if (!agent) {
          if (principal?.kind === 'api-key')
            throw new CertwrightError('forbidden', "this route takes the agent's own key");
          throw new CertwrightError('unauthorized', 'a valid agent key is required');
        }
        if (agent.id !== params.id)
          throw new CertwrightError('forbidden', 'an agent may act only for itself');
        if (agent.retired_at !== null) throw new CertwrightError('gone', `agent '${agent.id}' is retired`);
        return {
          status: 201,
          body: await discovery.reportHostDiscovery({ type: 'agent', id: agent.id }, agent.id, body),
        };
      },
    }),
  ];
}
