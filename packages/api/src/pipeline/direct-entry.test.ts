import type { PlainResponse, RequestHead } from '@certwright/core';
import type { ProtocolMount } from '@certwright/protocols/mount';
import { describe, expect, it } from 'vitest';
import { createHandler } from '../create-handler.js';
import type { ResponseEvent } from './report.js';

/**
 * The direct entry is derived from the mounts and runs the Web entry's steps: the same answer,
 * limits, metrics and logs, whichever entry a request came through.
 */
const transport = { remoteAddress: '127.0.0.4' };
const echo: ProtocolMount = {
  prefix: '/echo',
  route: '/echo/{path}',
  public: { why: 'answers anyone', rateLimit: 'enrollment' },
  bodyLimit: (method, _pathname, headers) =>
    method === 'POST' && headers?.get('content-type') !== 'text/other' ? 64 : undefined,
  answer: async (head, readBody) => {
    const body = await readBody(64);
    return {
      status: 200,
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(body.byteLength + 1) },
      body: Uint8Array.from([...body, head.method === 'POST' ? 1 : 0]),
    };
  },
  operationOf: () => 'postEcho',
};
const guarded: ProtocolMount = {
  prefix: '/guarded',
  route: '/guarded',
  permission: 'system.read',
  bodyLimit: () => 64,
  answer: async () => new Response('in'),
};

function app(enrollment: number) {
  const events: ResponseEvent[] = [];
  const handler = createHandler({
    auth: { type: 'api-key', secret: 'k' },
    protocols: [echo, guarded],
    rateLimits: { enrollment },
    onResponse: (event) => events.push(event),
  });
  return { handler, events };
}
const headOf = (path: string, headers: Record<string, string> = {}): RequestHead => ({
  method: 'POST',
  url: `https://127.0.0.1${path}`,
  pathname: path,
  headers: new Headers(headers),
});
const without = ({ durationMs: _d, requestId: _r, ...rest }: ResponseEvent) => rest;

describe('directEntry', () => {
  it("answers a public mount's request as the Web entry does, and reports it the same", async () => {
    const { handler, events } = app(100);
    const body = Uint8Array.from([7, 8]);
    const web = await handler(
      new Request('https://127.0.0.1/echo/x', { method: 'POST', body, headers: { 'x-request-id': 'w' } }),
      transport,
    );
    const direct = (await handler.direct.answer(
      headOf('/echo/x', { 'x-request-id': 'd' }),
      body,
      transport,
    )) as PlainResponse;
    expect(direct).not.toBeInstanceOf(Response);
    expect(direct.status).toBe(web.status);
    expect([...direct.body]).toEqual([...new Uint8Array(await web.arrayBuffer())]);
    expect(direct.headers['x-request-id']).toBe('d');
    expect(web.headers.get('x-request-id')).toBe('w');
    expect(direct.headers['content-length']).toBe(web.headers.get('content-length'));
    expect(events).toHaveLength(2);
    expect(without(events[1]!)).toEqual(without(events[0]!));
    expect(events[1]).toMatchObject({ route: '/echo/{path}', operationId: 'postEcho', client: '127.0.0.4' });
  });

  it('spends one rate-limit budget across both entries and refuses alike over it', async () => {
    const { handler, events } = app(2);
    await handler(new Request('https://127.0.0.1/echo/x', { method: 'POST', body: 'a' }), transport);
    await handler.direct.answer(headOf('/echo/x'), new Uint8Array(1), transport);
    const direct = (await handler.direct.answer(headOf('/echo/x'), new Uint8Array(1), transport))!;
    const web = await handler(
      new Request('https://127.0.0.1/echo/x', { method: 'POST', body: 'a' }),
      transport,
    );
    expect(direct.status).toBe(429);
    expect(web.status).toBe(429);
    expect(events.map((e) => e.rateLimited ?? false)).toEqual([false, false, true, true]);
  });

  it('offers only public mounts, and declines what the mount declines by its headers', async () => {
    const { handler, events } = app(100);
    expect(handler.direct.bodyLimit('POST', '/echo/x')).toBe(64);
    expect(handler.direct.bodyLimit('GET', '/echo/x')).toBeUndefined();
    expect(handler.direct.bodyLimit('POST', '/guarded')).toBeUndefined();
    expect(handler.direct.bodyLimit('POST', '/api/v1/version')).toBeUndefined();
    expect(await handler.direct.answer(headOf('/guarded'), new Uint8Array(0), transport)).toBeUndefined();
    const other = headOf('/echo/x', { 'content-type': 'text/other' });
    expect(await handler.direct.answer(other, new Uint8Array(0), transport)).toBeUndefined();
    // Declined requests were not admitted: nothing was counted or reported.
    expect(events).toEqual([]);
  });
});
