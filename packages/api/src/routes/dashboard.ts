import type { Services } from '@certwright/core';
import { z } from 'zod';
import { defineRoute, type RouteSpec } from '../http/route.js';

const countsSchema = z.record(z.string(), z.number().int());
const countedSchema = z.object({
  total: z.number().int(),
  estimated: z.boolean().describe('true when the count is the database estimate (more than 1,000 matched)'),
});
const groupSchema = countedSchema.extend({ id: z.string(), name: z.string() });

/**
 * The dashboard's figures. Each count is the total of one filter the certificate or job list
 * accepts, so the console links every figure to the list that shows the same number.
 */
export function dashboardRoutes(services: Services): RouteSpec[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/dashboard/summary',
      operationId: 'getDashboardSummary',
      permission: 'cert.read',
      summary:
        'Counts for the dashboard: certificates by status and expiring soon, agents by status, jobs by status, notifications by status (dead included)',
      tags: ['dashboard'],
      responses: {
        200: {
          description: 'summary',
          schema: z.object({
            certificates: z.object({
              by_status: countsSchema,
              total: z.number().int(),
              expiring_soon: z
                .number()
                .int()
                .describe('Active or Expiring, latest version expiring within expiring_soon_days from now'),
              expiring_soon_days: z.number().int(),
              estimated: z
                .boolean()
                .describe('true when a figure is an estimate (more than 1,000 certificates matched it)'),
            }),
            agents: countsSchema,
            jobs: countsSchema,
            notifications: countsSchema,
            dead_notifications: z.number().int(),
            undeliverable_notifications: z
              .number()
              .int()
              .describe(
                'notifications no configured channel delivers (no SMTP settings, webhook deleted or disabled)',
              ),
          }),
        },
      },
      handle: async () => {
        const [certificates, agents, byStatus, jobs] = await Promise.all([
          services.certificates.summary(),
          services.agents.summary(),
          services.notifications.countByStatus(),
          services.jobs.countByStatus(),
        ]);
        return {
          status: 200,
          body: {
            certificates,
            agents,
            jobs,
            notifications: byStatus,
            dead_notifications: byStatus.dead,
            undeliverable_notifications: byStatus.undeliverable,
          },
          headers: { 'cache-control': 'no-store' },
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/dashboard/overview',
      operationId: 'getDashboardOverview',
      permission: 'cert.read',
      summary:
        'Expiry timeline by week, certificates by issuer and team, renewals due this week and the renewal success rate of the last 7 days',
      tags: ['dashboard'],
      responses: {
        200: {
          description: 'overview',
          schema: z.object({
            expiry_timeline: z
              .array(countedSchema.extend({ starts_at: z.date(), ends_at: z.date() }))
              .describe(
                'Active, Expiring, RenewalInProgress or Failed certificates whose latest version expires in [starts_at, ends_at), 13 weekly bins from now',
              ),
            by_issuer: z.array(groupSchema).describe('all certificates per issuer, largest first'),
            issuers_more: z.number().int().describe('issuers not counted (beyond the first 12)'),
            by_team: z.array(groupSchema).describe('all certificates per team, largest first'),
            teams_more: z.number().int().describe('teams not counted (beyond the first 12)'),
            renewals: z.object({
              due_this_week: countedSchema.describe('live certificates expiring within 7 days'),
              completed_last_7_days: z.number().int(),
              failed_last_7_days: z.number().int(),
              success_rate: z
                .number()
                .nullable()
                .describe('completed / (completed + failed); null when none finished'),
            }),
            as_of: z.date(),
          }),
        },
      },
      handle: async () => ({
        status: 200,
        body: await services.dashboard.overview(),
        headers: { 'cache-control': 'no-store' },
      }),
    }),
  ];
}
