import { readBodyBytes } from '@certwright/core';
import type { RouteSpec } from '../http/route.js';
import { parseJsonBody, parsePart, queryObject } from '../http/validate.js';
import { typelessBodyRefusal } from './media-type.js';

export interface ValidInput {
  params: unknown;
  query: unknown;
  body: unknown;
}

/**
 * The route's path parameters, query and JSON body parsed by its schemas, in that order; a
 * part that does not fit throws the 400 (`errors: [{field, message}]`). The body is read only
 * for a route with a body schema, never above `maxBodyBytes` (413 before buffering it).
 */
export async function validatedInput(
  spec: RouteSpec,
  pathParams: Record<string, string>,
  request: Request,
  url: URL,
  maxBodyBytes: number,
  requestId: string,
): Promise<ValidInput | Response> {
  const params = spec.params ? parsePart(spec.params, pathParams, 'path') : pathParams;
  const query = spec.query ? parsePart(spec.query, queryObject(url.searchParams), 'query') : {};
  if (!spec.body) return { params, query, body: undefined };
  const bytes = await readBodyBytes(request, maxBodyBytes);
  const refused = typelessBodyRefusal(bytes, request, requestId);
  if (refused) return refused;
  return { params, query, body: parsePart(spec.body, parseJsonBody(bytes), 'body') };
}
