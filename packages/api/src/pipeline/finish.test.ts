import { describe, expect, it } from 'vitest';
import { finishedPlain, finishedResponse } from './finish.js';

describe('finishedResponse', () => {
  it('gives a protocol answer a Content-Length (HEAD: the length, no body) and the request id', async () => {
    const chunked = new Response(
      new ReadableStream({ start: (c) => (c.enqueue(new Uint8Array(3)), c.close()) }),
    );
    const answer = await finishedResponse(chunked, 'GET', 'req-9', { route: '/r', protocol: true });
    expect(answer.headers.get('content-length')).toBe('3');
    expect(answer.headers.get('x-request-id')).toBe('req-9');
    expect(answer.headers.has('x-content-type-options')).toBe(false);
    const head = await finishedResponse(new Response('abcd'), 'HEAD', 'req', { route: '/r', protocol: true });
    expect(head.headers.get('content-length')).toBe('4');
    expect(head.body).toBeNull();
  });

  it('marks a REST answer nosniff and gives it the request id', async () => {
    const answer = await finishedResponse(Response.json({}), 'GET', 'req-10', { route: '/api/v1/x' });
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    expect(answer.headers.get('x-request-id')).toBe('req-10');
  });
});

describe('finishedPlain', () => {
  it('adds the request id to a written answer without changing the one it was given (shared, frozen answers)', () => {
    const shared = Object.freeze({
      status: 200,
      headers: Object.freeze({ 'content-length': '1' }),
      body: new Uint8Array(1),
    });
    const answer = finishedPlain(shared, 'req-11');
    expect(answer.headers).toEqual({ 'content-length': '1', 'x-request-id': 'req-11' });
    expect(shared.headers).toEqual({ 'content-length': '1' });
    expect(answer.body).toBe(shared.body);
  });
});
