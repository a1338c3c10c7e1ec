import {
  notificationEventSchema,
  type Services,
  webhookCreateSchema,
  webhookDeliveryListSchema,
  webhookListSchema,
  webhookRedeliverResultSchema,
  webhookSecuritySchema,
  webhookTestResultSchema,
  webhookTestSchema,
  webhookUpdateSchema,
  webhookViewSchema,
} from '@certwright/core';
import { actorOf } from '../auth/principal.js';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { envelope, idParams, timestamp } from './crud.js';

/** The webhook as JSON: timestamps as RFC 3339 strings. */
const webhookJson = webhookViewSchema.extend({ created_at: timestamp, updated_at: timestamp });

const WEBHOOKS = '/api/notifications/webhooks';
const ITEM = `${WEBHOOKS}/{id}`;
/**
 * Webhook answers hold masked secrets only, yet they describe where credentials go: no cache
 * (a shared proxy, the browser's disk) keeps them.
 */
const NO_STORE = { 'cache-control': 'no-store' };
/** The webhook security section of the system settings (the private-range allowlist). */
export const WEBHOOK_SECURITY_PATH = '/api/system/settings/webhook-security';

/**
 * Webhook targets of alert notifications, at the paths alert-monitoring webhooks use
 * (docs/notifications/webhooks.md). Every route is admin-only: a webhook sends data to an
 * address its author chooses and carries credentials in its URL and headers.
 */
export function webhookRoutes(services: Services): RouteSpec[] {
  const webhooks = services.webhooks;
  const tags = ['webhooks'];
  return [
    defineRoute({
      method: 'GET',
      path: WEBHOOKS,
      operationId: 'listWebhooks',
      permission: 'webhook.read',
      summary: 'Webhooks, by name; URLs and header values are masked',
      tags,
      query: webhookListSchema,
      responses: { 200: { description: 'one page of webhooks', schema: envelope(webhookJson) } },
      handle: async ({ query }) => ({ status: 200, body: await webhooks.list(query), headers: NO_STORE }),
    }),
    defineRoute({
      method: 'POST',
      path: WEBHOOKS,
      operationId: 'createWebhook',
      permission: 'webhook.write',
      summary: 'Create a webhook; templates, kind rules and the URL’s destination are checked first',
      tags,
      body: webhookCreateSchema,
      responses: { 201: { description: 'the webhook created', schema: webhookJson } },
      handle: async ({ body, principal }) => ({
        status: 201,
        body: await webhooks.create(actorOf(principal), body),
        headers: NO_STORE,
      }),
    }),
    defineRoute({
      method: 'POST',
      path: `${WEBHOOKS}/test`,
      operationId: 'testWebhook',
      permission: 'webhook.write',
      summary:
        'Send a sample alert once through the delivery path of live alerts; answers the target’s status, a response excerpt, the duration and, on failure, the meaning',
      tags,
      body: webhookTestSchema,
      responses: { 200: { description: 'what the target answered', schema: webhookTestResultSchema } },
      handle: async ({ body, principal }) => ({
        status: 200,
        body: await webhooks.test(actorOf(principal), body),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: ITEM,
      operationId: 'getWebhook',
      permission: 'webhook.read',
      summary: 'One webhook; its URL and header values are masked',
      tags,
      params: idParams,
      responses: {
        200: { description: 'the webhook', schema: webhookJson },
        404: { description: 'unknown id' },
      },
      handle: async ({ params }) => ({ status: 200, body: await webhooks.get(params.id), headers: NO_STORE }),
    }),
    defineRoute({
      method: 'PUT',
      path: ITEM,
      operationId: 'updateWebhook',
      permission: 'webhook.write',
      summary: 'Update the fields given; a header whose value is masked keeps its stored value',
      tags,
      params: idParams,
      body: webhookUpdateSchema,
      responses: {
        200: { description: 'the webhook after the update', schema: webhookJson },
        404: { description: 'unknown id' },
      },
      handle: async ({ params, body, principal }) => ({
        status: 200,
        body: await webhooks.update(actorOf(principal), params.id, body),
        headers: NO_STORE,
      }),
    }),
    defineRoute({
      method: 'DELETE',
      path: ITEM,
      operationId: 'deleteWebhook',
      permission: 'webhook.write',
      summary: 'Delete a webhook; its pending deliveries resolve without being sent',
      tags,
      params: idParams,
      responses: { 204: { description: 'deleted' }, 404: { description: 'unknown id' } },
      handle: async ({ params, principal }) => {
        await webhooks.delete(actorOf(principal), params.id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'GET',
      path: `${ITEM}/deliveries`,
      operationId: 'listWebhookDeliveries',
      permission: 'webhook.read',
      summary:
        'A webhook’s deliveries (notification events with their status, retries and last error), newest first',
      tags,
      params: idParams,
      query: webhookDeliveryListSchema,
      responses: {
        200: { description: 'one page of deliveries', schema: envelope(notificationEventSchema) },
        404: { description: 'unknown id' },
      },
      handle: async ({ params, query }) => ({
        status: 200,
        body: await webhooks.deliveries(params.id, query),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: `${ITEM}/redeliver`,
      operationId: 'redeliverWebhook',
      permission: 'webhook.write',
      summary:
        'Requeue every dead delivery of a webhook (its receiver is back): pending again with a fresh retry budget and the same idempotency key',
      tags,
      params: idParams,
      responses: {
        200: { description: 'how many were requeued', schema: webhookRedeliverResultSchema },
        404: { description: 'unknown id' },
      },
      handle: async ({ params, principal }) => ({
        status: 200,
        body: await webhooks.redeliver(actorOf(principal), params.id),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: WEBHOOK_SECURITY_PATH,
      operationId: 'getWebhookSecurity',
      permission: 'webhook.read',
      summary: 'The private ranges webhooks may reach (empty: none)',
      tags,
      responses: { 200: { description: 'the setting', schema: webhookSecuritySchema } },
      handle: async () => ({ status: 200, body: await webhooks.getSecurity() }),
    }),
    defineRoute({
      method: 'PUT',
      path: WEBHOOK_SECURITY_PATH,
      operationId: 'updateWebhookSecurity',
      permission: 'webhook.write',
      summary:
        'Replace the private-range allowlist (comma-separated CIDRs or IPs; one bad entry refuses it all); applies to the next delivery',
      tags,
      body: webhookSecuritySchema,
      responses: { 200: { description: 'the setting as stored (canonical)', schema: webhookSecuritySchema } },
      handle: async ({ body, principal }) => ({
        status: 200,
        body: await webhooks.setSecurity(actorOf(principal), body),
      }),
    }),
  ];
}
