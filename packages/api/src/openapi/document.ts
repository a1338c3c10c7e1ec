import type { ProtocolMount } from '@certwright/protocols/mount';
import { z } from 'zod';
import type { PublicAccess, RouteSpec } from '../http/route.js';

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };

const PROBLEM = 'application/problem+json';

const problemSchema = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'error', 'request_id'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    error: { type: 'string', description: 'stable snake_case error code' },
    reason: { type: 'string', description: 'the precise reason, when it says more than `error`' },
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

/**
 * OpenAPI 3.1 from the route table and the protocol mounts themselves; JSON Schema 2020-12 is
 * what 3.1 speaks. Every error answer of a REST route is declared as problem JSON.
 */
export function buildOpenApiDocument(
  routes: readonly RouteSpec[],
  mounts: readonly ProtocolMount[],
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
      ...access(route.public),
    };
    if (route.permission) operation['x-permission'] = route.permission;
    if (route.body) {
      operation.requestBody = {
        required: !route.body.safeParse(undefined).success,
        content: { 'application/json': { schema: jsonSchema(route.body, 'input') } },
      };
    }
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, unknown>)[route.method.toLowerCase()] = operation;
  }
  for (const mount of mounts) {
    for (const [path, item] of Object.entries(mount.operations ?? {})) {
      for (const [method, operation] of Object.entries(item)) {
        const described: Record<string, unknown> = { ...operation, ...access(mount.public) };
        if (!mount.public) {
          described.responses = {
            ...(operation.responses as object),
            ...authenticationErrors(mount.permission),
          };
          if (mount.permission) described['x-permission'] = mount.permission;
        }
        paths[path] ??= {};
        (paths[path] as Record<string, unknown>)[method] = described;
      }
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'certwright REST API',
      version: info.version,
      description:
        'Certificate lifecycle management. Errors are RFC 9457 problem documents; the revocation-status ' +
        'protocols (CRL, OCSP) answer in their own formats.',
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

/** Public operations need no key and say why; everything else inherits the API key. */
function access(declared: PublicAccess | undefined): Record<string, unknown> {
  if (!declared) return {};
  return { security: [], 'x-public': declared.why, 'x-rate-limit': declared.rateLimit };
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

const problem = (description: string) => ({
  description,
  content: { [PROBLEM]: { schema: { $ref: '#/components/schemas/Problem' } } },
});

function authenticationErrors(permission?: string): Record<string, unknown> {
  return {
    401: problem('missing or wrong API key'),
    403: problem(
      permission ? `the caller lacks the permission ${permission}` : 'an agent key outside the agent routes',
    ),
    429: { ...problem('too many failed API keys from this client'), headers: retryAfterHeader },
  };
}

const retryAfterHeader = {
  'Retry-After': { description: 'seconds until the client may retry', schema: { type: 'integer' } },
};

/**
 * The route's own answers, then what the edge may answer for any route of its shape: input
 * errors, authentication, the admin gate, media type and size of a body, rate limits, and
 * internal or dependency failures.
 */
function responses(route: RouteSpec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    if (Number(status) >= 400 && !spec.schema) {
      out[status] = problem(spec.description);
      continue;
    }
    const content = spec.schema
      ? { 'application/json': { schema: jsonSchema(spec.schema, 'output') } }
      : spec.contentType
        ? Object.fromEntries([spec.contentType].flat().map((type) => [type, {}]))
        : undefined;
    out[status] = { description: spec.description, ...(content ? { content } : {}) };
  }
  const add = (status: number, description: string) => {
    out[status] ??= problem(description);
  };
  if (route.params || route.query || route.body) add(400, 'invalid input; `errors` names each field');
  if (route.public) {
    out[429] ??= { ...problem('too many requests from this client'), headers: retryAfterHeader };
  } else {
    Object.assign(out, { ...authenticationErrors(route.permission ?? undefined), ...out });
  }
  if (route.path.includes('{')) add(404, 'no record with that id');
  if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(route.method)) {
    add(415, 'a Content-Type other than application/json');
  }
  if (route.body) add(413, 'the body is larger than SVC_MAX_BODY_BYTES');
  add(500, 'internal error; the detail is fixed and the cause is logged with the request id');
  add(503, 'storage or another dependency is unavailable');
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
