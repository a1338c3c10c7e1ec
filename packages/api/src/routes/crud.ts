import type { Actor, Paged, Permission } from '@certwright/core';
import { z } from 'zod';
import { actorOf } from '../auth/principal.js';
import { defineRoute, type RouteSpec } from '../http/route.js';

/** RFC 3339 UTC timestamp as it appears in JSON (Date#toJSON). */
export const timestamp = z.iso.datetime();

export const idParams = z.object({ id: z.string().min(1).max(128).describe('record id') });

/** The list envelope: `{data, total, page, per_page}`. */
export function envelope<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item),
    total: z.number().int().min(0),
    page: z.number().int().min(1),
    per_page: z.number().int().min(1).max(500),
  });
}

export function pageOf<T>(page: Paged<T>, view: (item: T) => unknown) {
  return { data: page.data.map(view), total: page.total, page: page.page, per_page: page.per_page };
}

interface CrudService<T> {
  create(actor: Actor, input: never): Promise<T>;
  get(id: string): Promise<T>;
  list(query: never): Promise<Paged<T>>;
  update(actor: Actor, id: string, input: never): Promise<T>;
  delete(actor: Actor, id: string): Promise<void>;
}

export interface CrudOptions<T> {
  /** Collection path, e.g. `/api/v1/owners`. */
  path: string;
  tag: string;
  /** Operation id stem, e.g. `Owner` → createOwner, listOwners … */
  name: string;
  /** Human name in summaries, e.g. `owner`. */
  noun: string;
  record: z.ZodType;
  createBody: z.ZodType;
  updateBody: z.ZodType;
  listQuery: z.ZodType;
  service: CrudService<T>;
  /** Maps a record to its JSON; picks fields explicitly where a record could carry secrets. */
  view?: (record: T) => unknown;
  /** Literal sub-paths registered before `{id}` (e.g. `/policies/evaluate`). */
  before?: RouteSpec[];
  /** Extra notes for the DELETE summary. */
  deleteNote?: string;
  /** What list and get require, and what create, update and delete require. */
  permissions: { read: Permission; write: Permission };
}

/** The five routes of a reference-data resource: list, create, get, update (PUT), delete. */
export function crudRoutes<T>(o: CrudOptions<T>): RouteSpec[] {
  const view = o.view ?? ((r: T) => r);
  const s = o.service as unknown as {
    create(actor: Actor, input: unknown): Promise<T>;
    get(id: string): Promise<T>;
    list(query: unknown): Promise<Paged<T>>;
    update(actor: Actor, id: string, input: unknown): Promise<T>;
    delete(actor: Actor, id: string): Promise<void>;
  };
  const item = `${o.path}/{id}`;
  return [
    defineRoute({
      method: 'GET',
      path: o.path,
      operationId: `list${o.name}s`,
      permission: o.permissions.read,
      summary: `List ${o.noun}s`,
      tags: [o.tag],
      query: o.listQuery,
      responses: { 200: { description: `one page of ${o.noun}s`, schema: envelope(o.record) } },
      handle: async ({ query }) => ({ status: 200, body: pageOf(await s.list(query), view) }),
    }),
    defineRoute({
      method: 'POST',
      path: o.path,
      operationId: `create${o.name}`,
      permission: o.permissions.write,
      summary: `Create a ${o.noun}`,
      tags: [o.tag],
      body: o.createBody,
      responses: {
        201: { description: `the ${o.noun} created`, schema: o.record },
        409: { description: 'a unique value is taken' },
      },
      handle: async ({ body, principal }) => ({
        status: 201,
        body: view(await s.create(actorOf(principal), body)),
      }),
    }),
    ...(o.before ?? []),
    defineRoute({
      method: 'GET',
      path: item,
      operationId: `get${o.name}`,
      permission: o.permissions.read,
      summary: `Get one ${o.noun}`,
      tags: [o.tag],
      params: idParams,
      responses: {
        200: { description: `the ${o.noun}`, schema: o.record },
        404: { description: 'unknown id' },
      },
      handle: async ({ params }) => ({ status: 200, body: view(await s.get(params.id)) }),
    }),
    defineRoute({
      method: 'PUT',
      path: item,
      operationId: `update${o.name}`,
      permission: o.permissions.write,
      summary: `Update a ${o.noun}; omitted fields keep their values`,
      tags: [o.tag],
      params: idParams,
      body: o.updateBody,
      responses: {
        200: { description: `the ${o.noun} after the update`, schema: o.record },
        404: { description: 'unknown id' },
        409: { description: 'a unique value is taken' },
      },
      handle: async ({ params, body, principal }) => ({
        status: 200,
        body: view(await s.update(actorOf(principal), params.id, body)),
      }),
    }),
    defineRoute({
      method: 'DELETE',
      path: item,
      operationId: `delete${o.name}`,
      permission: o.permissions.write,
      summary: `Delete a ${o.noun}${o.deleteNote ? `; ${o.deleteNote}` : ''}`,
      tags: [o.tag],
      params: idParams,
      responses: {
        204: { description: 'deleted' },
        404: { description: 'unknown id' },
        409: { description: 'still referenced; the body names the record and the counts' },
      },
      handle: async ({ params, principal }) => {
        await s.delete(actorOf(principal), params.id);
        return { status: 204 };
      },
    }),
  ];
}
