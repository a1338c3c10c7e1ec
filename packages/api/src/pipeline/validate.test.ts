import { isCertwrightError } from '@certwright/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineRoute } from '../http/route.js';
import { validatedInput } from './validate.js';

const spec = defineRoute({
  method: 'POST',
  path: '/things/{id}',
  operationId: 'createThing',
  summary: 'x',
  tags: [],
  permission: 'cert.write',
  params: z.object({ id: z.string().regex(/^t_\d+$/) }),
  query: z.object({ dry_run: z.enum(['true', 'false']).optional() }),
  body: z.object({ name: z.string().min(1) }),
  responses: { 200: { description: 'ok', schema: z.object({}) } },
  handle: async () => ({ status: 200 }),
});
const post = (
  url: string,
  body: string,
  headers: Record<string, string> = { 'content-type': 'application/json' },
) => new Request(url, { method: 'POST', body, headers });
const thrown = async (run: () => Promise<unknown>) => {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
};

describe('validatedInput', () => {
  it('parses path parameters, query and JSON body with the route schemas', async () => {
    const url = new URL('https://127.0.0.1/things/t_1?dry_run=true');
    const request = post(url.href, '{"name":"a"}');
    expect(await validatedInput(spec, { id: 't_1' }, request, url, 1024, 'req')).toEqual({
      params: { id: 't_1' },
      query: { dry_run: 'true' },
      body: { name: 'a' },
    });
  });

  it('throws the 400 with the field for a part that does not fit', async () => {
    const url = new URL('https://127.0.0.1/things/t_1?dry_run=maybe');
    const error = await thrown(() =>
      validatedInput(spec, { id: 't_1' }, post(url.href, '{"name":"a"}'), url, 1024, 'r'),
    );
    expect(isCertwrightError(error) && error.code).toBe('validation_failed');
    const bad = new URL('https://127.0.0.1/things/x');
    const badPath = await thrown(() =>
      validatedInput(spec, { id: 'x' }, post(bad.href, '{"name":"a"}'), bad, 1024, 'r'),
    );
    expect(isCertwrightError(badPath) && badPath.code).toBe('validation_failed');
  });

  it('refuses a body above the limit before parsing it, and a typeless body with 415', async () => {
    const url = new URL('https://127.0.0.1/things/t_1');
    const big = await thrown(() =>
      validatedInput(
        spec,
        { id: 't_1' },
        post(url.href, JSON.stringify({ name: 'x'.repeat(100) })),
        url,
        64,
        'r',
      ),
    );
    expect(isCertwrightError(big) && big.code).toBe('payload_too_large');
    const typeless = new Request(url.href, { method: 'POST', body: new Blob(['{"name":"a"}']) });
    const refused = await validatedInput(spec, { id: 't_1' }, typeless, url, 1024, 'req-7');
    expect(refused).toBeInstanceOf(Response);
    expect((refused as Response).status).toBe(415);
  });
});
