import {
  notificationCreateSchema,
  notificationEventSchema,
  notificationListSchema,
  type Services,
} from '@certwright/core';
import { z } from 'zod';
import { actorOf } from '../auth/principal.js';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { envelope, idParams } from './crud.js';

/** Notification events. */
export function notificationRoutes(services: Services): RouteSpec[] {
  const notifications = services.notifications;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/notifications',
      operationId: 'listNotifications',
      permission: 'notification.read',
      summary: 'Notification events, newest first; status filter includes dead (comma-separated list)',
      tags: ['notifications'],
      query: notificationListSchema,
      responses: { 200: { description: 'events', schema: envelope(notificationEventSchema) } },
      handle: async ({ query }) => ({ status: 200, body: await notifications.list(query) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/notifications',
      operationId: 'createNotification',
      permission: 'notification.create',
      summary: 'Queue a notification event (pending; the next delivery pass sends it)',
      tags: ['notifications'],
      body: notificationCreateSchema,
      responses: { 201: { description: 'queued', schema: notificationEventSchema } },
      handle: async ({ body, principal }) => ({
        status: 201,
        body: await notifications.create(actorOf(principal), body),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/notifications/{id}',
      operationId: 'getNotification',
      permission: 'notification.read',
      summary: 'One notification event',
      tags: ['notifications'],
      params: idParams,
      responses: { 200: { description: 'the event', schema: notificationEventSchema } },
      handle: async ({ params }) => ({ status: 200, body: await notifications.get(params.id) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/notifications/{id}/requeue',
      operationId: 'requeueNotification',
      permission: 'notification.write',
      summary:
        'Reset a dead or undeliverable notification to pending (retry_count 0); 409 for any other status',
      tags: ['notifications'],
      params: idParams,
      responses: {
        200: { description: 'requeued', schema: notificationEventSchema },
        409: { description: 'neither dead nor undeliverable' },
      },
      handle: async ({ params, principal }) => ({
        status: 200,
        body: await notifications.requeue(actorOf(principal), params.id),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/notifications/{id}/read',
      operationId: 'readNotification',
      permission: 'notification.write',
      summary: 'Mark a sent notification read',
      tags: ['notifications'],
      params: idParams,
      responses: {
        200: { description: 'read', schema: notificationEventSchema },
        409: { description: 'not sent' },
      },
      handle: async ({ params, principal }) => ({
        status: 200,
        body: await notifications.markRead(actorOf(principal), params.id),
      }),
    }),
  ];
}
