import type { Logger, Permission, TransportContext } from '@certwright/core';
import type { PublicAccess } from '@certwright/protocols/mount';
import type { z } from 'zod';
import type { Principal } from '../auth/principal.js';

export type { PublicAccess };

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ResponseSpec {
  description: string;
  /** JSON body schema; omit for empty bodies or non-JSON bodies described by `contentType`. */
  schema?: z.ZodType;
  /** The media type(s) of a non-JSON body. */
  contentType?: string | readonly string[];
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
  /**
   * What the caller must hold; without it the answer is 403 before validation and before any
   * service runs. `null` only together with `public` (no principal exists to check).
   */
  permission: Permission | null;
  /** Present: served without authentication, under a per-client rate limit. */
  public?: PublicAccess;
  /**
   * A state-changing route whose handler reads a non-JSON body itself names its media types
   * here (e.g. `application/x-www-form-urlencoded`); others are 415 before the handler.
   * `'any'`: every media type reaches the handler, which answers a wrong one in its own way (a
   * protocol whose error table has one answer for every failure).
   */
  readsBody?: readonly string[] | 'any';
  /** GET routes answer HEAD too (RFC 9110 §9.3.2) unless this is `false`. */
  head?: false;
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
