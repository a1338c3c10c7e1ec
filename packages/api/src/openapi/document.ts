import { z } from 'zod';
import { requiresAuthentication } from '../auth/public-routes.js';
import type { RouteSpec } from '../http/route.js';

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };

const problemSchema = {
  type: 'object',
  required: ['type', 'title', 'status', 'error', 'request_id'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    error: { type: 'string', description: 'stable snake_case error code' },
    request_id: { type: 'string' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['field', 'message'],
        properties: { field: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
};

/** OpenAPI 3.1 from the route table itself; JSON Schema 2020-12 is what 3.1 speaks. */
export function buildOpenApiDocument(
  routes: readonly RouteSpec[],
  info: { version: string },
): OpenApiDocument {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      tags: route.tags,
      parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query')],
      responses: responses(route),
    };
    if (!requiresAuthentication(route.path)) operation.security = [];
    if (route.admin) operation['x-admin-only'] = true;
    if (route.body) {
      operation.requestBody = {
        required: !route.body.safeParse(undefined).success,
        content: { 'application/json': { schema: jsonSchema(route.body, 'input') } },
      };
    }
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, unknown>)[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'certwright REST API',
      version: info.version,
      description: 'Certificate lifecycle management. Errors are RFC 9457 problem documents.',
    },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'SVC_AUTH_SECRET' } },
      schemas: { Problem: problemSchema },
    },
    security: [{ apiKey: [] }],
    paths,
  };
}

function parameters(schema: z.ZodType | undefined, location: 'path' | 'query'): unknown[] {
  if (!(schema instanceof z.ZodObject)) return [];
  return Object.entries(schema.shape as Record<string, z.ZodType>).map(([name, field]) => ({
    name,
    in: location,
    required: location === 'path' || !field.safeParse(undefined).success,
    ...(field.description ? { description: field.description } : {}),
    schema: jsonSchema(field, 'input'),
  }));
}

function responses(route: RouteSpec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    const content = spec.schema
      ? { 'application/json': { schema: jsonSchema(spec.schema, 'output') } }
      : spec.contentType
        ? { [spec.contentType]: {} }
        : undefined;
    out[status] = { description: spec.description, ...(content ? { content } : {}) };
  }
  const problem = {
    content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
  };
  if (route.params || route.query || route.body) out['400'] ??= { description: 'invalid input', ...problem };
  if (requiresAuthentication(route.path))
    out['401'] ??= { description: 'missing or wrong API key', ...problem };
  if (route.admin) out['403'] ??= { description: 'admin only', ...problem };
  return out;
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): unknown {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return rest;
}
