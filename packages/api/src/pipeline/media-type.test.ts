import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { mediaTypeRefusal, typelessBodyRefusal } from './media-type.js';

const route = (method: RouteSpec['method'], readsBody?: RouteSpec['readsBody']): RouteSpec =>
  defineRoute({
    method,
    path: '/x',
    operationId: 'x',
    summary: 'x',
    tags: [],
    permission: 'cert.write',
    readsBody,
    responses: { 200: { description: 'ok', schema: z.object({}) } },
    handle: async () => ({ status: 200 }),
  });
const head = (contentType?: string) => ({
  method: 'POST',
  url: 'https://127.0.0.1/x',
  headers: new Headers(contentType ? { 'content-type': contentType } : {}),
});

describe('mediaTypeRefusal', () => {
  it('refuses a state-changing JSON route any type but application/json with 415', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      for (const type of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
      ]) {
        const refused = mediaTypeRefusal(route(method), head(type), 'req-6');
        expect(refused?.status).toBe(415);
        expect(await refused?.json()).toMatchObject({ error: 'unsupported_media_type', request_id: 'req-6' });
      }
    }
  });

  it('takes JSON (with a charset), no type at all, reads, and the types a route reads itself', () => {
    expect(mediaTypeRefusal(route('POST'), head('application/json'), 'req')).toBeUndefined();
    expect(mediaTypeRefusal(route('POST'), head('application/json; charset=utf-8'), 'req')).toBeUndefined();
    expect(mediaTypeRefusal(route('POST'), head(), 'req')).toBeUndefined();
    expect(mediaTypeRefusal(route('GET'), head('text/plain'), 'req')).toBeUndefined();
    const form = route('POST', ['application/x-www-form-urlencoded']);
    expect(
      mediaTypeRefusal(form, head('Application/X-WWW-Form-Urlencoded; charset=utf-8'), 'req'),
    ).toBeUndefined();
    expect(mediaTypeRefusal(form, head('text/plain'), 'req')?.status).toBe(415);
    expect(mediaTypeRefusal(route('POST', 'any'), head('text/plain'), 'req')).toBeUndefined();
  });
});

describe('typelessBodyRefusal', () => {
  it('refuses a non-empty body without a Content-Type, and nothing else', () => {
    expect(typelessBodyRefusal(new Uint8Array([0x7b]), head(), 'req')?.status).toBe(415);
    expect(typelessBodyRefusal(new Uint8Array(0), head(), 'req')).toBeUndefined();
    expect(typelessBodyRefusal(new Uint8Array([0x7b]), head('application/json'), 'req')).toBeUndefined();
  });
});
