import { silentLogger } from '@certwright/core';
import { describe, expect, it } from 'vitest';
import { type ResponseEvent, reporter, responseEventOf } from './report.js';

const head = { method: 'POST', url: 'https://127.0.0.1/.well-known/pki/ocsp/iss_1', headers: new Headers() };

describe('reporter', () => {
  it('reports each answer once with its route template, never the raw path, and keeps the event for the access log', () => {
    const events: ResponseEvent[] = [];
    const report = reporter({
      clientAddress: () => '127.0.0.5',
      onResponse: (event) => events.push(event),
      logger: silentLogger,
    });
    const written = { status: 200, headers: {}, body: new Uint8Array(1) };
    report(
      head,
      { remoteAddress: '127.0.0.1' },
      performance.now() - 5,
      'req-8',
      {
        route: '/.well-known/pki/ocsp/{issuer_id}',
        operationId: 'postOcspRequest',
        protocol: true,
      },
      written,
    );
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      method: 'POST',
      route: '/.well-known/pki/ocsp/{issuer_id}',
      operationId: 'postOcspRequest',
      status: 200,
      requestId: 'req-8',
      client: '127.0.0.5',
    });
    expect(events[0]!.durationMs).toBeGreaterThanOrEqual(5);
    expect(events[0]).not.toHaveProperty('rateLimited');
    expect(events[0]).not.toHaveProperty('principal');
    expect(responseEventOf(written)).toBe(events[0]);
  });

  it('says when the answer was a rate-limit refusal and who authenticated, by kind and id only', () => {
    const events: ResponseEvent[] = [];
    const report = reporter({
      clientAddress: (_h, t) => t.remoteAddress,
      onResponse: (e) => events.push(e),
      logger: silentLogger,
    });
    const response = new Response(null, { status: 429 });
    report(
      head,
      { remoteAddress: '127.0.0.1' },
      performance.now(),
      'req',
      {
        route: '/api/v1/certificates',
        rateLimited: true,
        principal: { kind: 'session', id: 'u1', permissions: 'all', sessionId: 's1' },
      },
      response,
    );
    expect(events[0]).toMatchObject({
      status: 429,
      rateLimited: true,
      principal: { kind: 'session', id: 'u1' },
    });
    expect(events[0]!.principal).toEqual({ kind: 'session', id: 'u1' });
    expect(responseEventOf(new Response(null))).toBeUndefined();
  });
});
