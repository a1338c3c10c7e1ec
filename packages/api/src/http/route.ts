import type { Logger, TransportContext } from '@certwright/core';
import type { z } from 'zod';
import type { Principal } from '../auth/principal.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ResponseSpec {
  description: string;
  /** JSON body schema; omit for empty bodies or non-JSON bodies described by `contentType`. */
  schema?: z.ZodType;
  contentType?: string;
}

/** What a route handler receives: validated inputs plus the request's context. */
export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  request: Request;
  transport: TransportContext;
  principal: Principal | null;
  requestId: string;
  logger: Logger;
}

/** A JSON answer; a handler returns a Response instead when it needs another body type. */
export interface JsonResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * One REST route: method, OpenAPI-style path, schemas and the handler. The same object
 * drives routing, validation and the OpenAPI document, so they cannot drift apart.
 */
export interface RouteSpec<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
> {
  method: HttpMethod;
  /** e.g. `/api/v1/agents/{id}`; literal routes must be listed before overlapping `{param}` ones. */
  path: string;
  operationId: string;
  summary: string;
  tags: string[];
  /** §5.4: answered with 403 before the handler runs when the principal is not admin. */
  admin?: boolean;
  params?: P;
  query?: Q;
  body?: B;
  responses: Record<number, ResponseSpec>;
  handle(input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>): Promise<JsonResult | Response>;
}

/** Keeps the generic parameters when routes are collected into one array. */
export function defineRoute<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(
  spec: RouteSpec<P, Q, B>,
): RouteSpec {
  return spec as unknown as RouteSpec;
}
