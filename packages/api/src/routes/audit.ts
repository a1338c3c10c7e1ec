import {
  type AuditEvent,
  auditCategorySchema,
  auditEventSchema,
  paged,
  pageQuerySchema,
  type Services,
  storagePage,
} from '@certwright/core';
import { z } from 'zod';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { envelope } from './crud.js';

/** A query integer: digits only, so `limit=abc` is a 400 naming the field. */
const queryInt = z
  .string()
  .regex(/^-?\d{1,9}$/, 'must be an integer')
  .transform((text) => Number.parseInt(text, 10));

const timestamp = z.iso
  .datetime({ offset: true, message: 'must be an RFC 3339 timestamp' })
  .transform((text) => new Date(text));

const exportQuery = z.object({
  from: timestamp.optional().describe('inclusive; default 90 days before `to` (or now)'),
  to: timestamp.optional().describe('exclusive; default: no upper bound'),
  limit: queryInt.optional().describe('1 to 100000, default 100000'),
  category: auditCategorySchema.optional(),
});

const hashSchema = z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits');

const anchorQuery = z
  .object({
    anchor_seq: queryInt.optional().describe('seq of an anchored event (with anchor_hash)'),
    anchor_hash: hashSchema.optional().describe('the hash that event had when it was anchored'),
  })
  .superRefine((q, ctx) => {
    if (q.anchor_seq !== undefined && q.anchor_seq < 1) {
      ctx.addIssue({ code: 'custom', path: ['anchor_seq'], message: 'must be at least 1' });
    }
    if ((q.anchor_seq === undefined) !== (q.anchor_hash === undefined)) {
      const missing = q.anchor_seq === undefined ? 'anchor_seq' : 'anchor_hash';
      ctx.addIssue({ code: 'custom', path: [missing], message: 'anchor_seq and anchor_hash go together' });
    }
  });

/**
 * The audit trail: `audit.read` for the trail, `audit.export` for the export; agents never see
 * the trail.
 */
export function auditRoutes(services: Services): RouteSpec[] {
  const audit = services.audit;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/audit/export',
      operationId: 'exportAudit',
      permission: 'audit.export',
      summary: 'NDJSON export, one event per line, streamed in chain order',
      tags: ['audit'],
      query: exportQuery,
      responses: {
        200: { description: 'one JSON audit event per line', contentType: 'application/x-ndjson' },
      },
      handle: async ({ query, logger }) => {
        // Validation happens here, before the 200 status is committed to the wire.
        const events = audit.export(query);
        return new Response(ndjsonStream(events, logger), {
          status: 200,
          headers: {
            'content-type': 'application/x-ndjson; charset=utf-8',
            'cache-control': 'no-store',
            'content-disposition': 'attachment; filename="audit-export.ndjson"',
          },
        });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/audit/verify',
      operationId: 'verifyAuditChain',
      permission: 'audit.read',
      summary: 'Check every event and the stored head under the chain key, optionally against an anchor',
      tags: ['audit'],
      query: anchorQuery,
      responses: {
        200: {
          description: 'chain report',
          schema: z.object({
            ok: z.boolean(),
            checked: z.number().int(),
            broken_at: z.number().int().optional(),
            reason: z.string().optional(),
            head_seq: z.number().int().nullable(),
            head_hash: hashSchema.nullable(),
          }),
        },
      },
      handle: async ({ query }) => {
        const anchor =
          query.anchor_seq !== undefined && query.anchor_hash !== undefined
            ? { seq: query.anchor_seq, hash: query.anchor_hash }
            : undefined;
        return { status: 200, body: await audit.verifyChain(anchor) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/audit/head',
      operationId: 'getAuditHead',
      permission: 'audit.read',
      summary: 'The stored head of the chain (seq and HMAC of the newest event), to anchor elsewhere',
      tags: ['audit'],
      responses: {
        200: {
          description: 'the chain head',
          schema: z.object({
            seq: z.number().int().min(0),
            hash: hashSchema,
            keyed_from_seq: z.number().int().min(1),
          }),
        },
      },
      handle: async () => ({ status: 200, body: await audit.head() }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/audit',
      operationId: 'listAudit',
      permission: 'audit.read',
      summary: 'Audit events, paged',
      tags: ['audit'],
      query: pageQuerySchema.extend({
        action: z.string().min(1).max(128).optional(),
        resource_id: z.string().min(1).max(255).optional(),
        category: auditCategorySchema.optional(),
      }),
      responses: { 200: { description: 'events', schema: envelope(auditEventSchema) } },
      handle: async ({ query }) => {
        const { page, per_page, ...filter } = query;
        const window = { page, per_page };
        const result = await services.deps.storage.audit.list({ ...filter, ...storagePage(window) });
        return { status: 200, body: paged(result, window) };
      },
    }),
  ];
}

/**
 * Pulls one event at a time from the storage's paged iterator, so memory holds one page of
 * events however long the export. A client that disconnects cancels the stream, which closes
 * the iterator (and its cursor). A storage failure mid-stream can no longer change the status:
 * it ends the body with an error so the client sees a truncated transfer, never a silent cut.
 */
function ndjsonStream(
  events: AsyncIterable<AuditEvent>,
  logger: { error(fields: object, message?: string): void },
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const iterator = events[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const next = await iterator.next();
          if (next.done) {
            controller.close();
            return;
          }
          controller.enqueue(encoder.encode(`${JSON.stringify(next.value)}\n`));
        } catch (error) {
          logger.error({ err: error }, 'audit export failed mid-stream');
          controller.error(error);
        }
      },
      async cancel() {
        await iterator.return?.();
      },
    },
    { highWaterMark: 16 },
  );
}
