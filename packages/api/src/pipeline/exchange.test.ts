import { CertwrightError, silentLogger } from '@certwright/core';
import { describe, expect, it } from 'vitest';
import { exchanger } from './exchange.js';
import type { Outcome } from './outcome.js';
import type { Report } from './report.js';

const head = {
  method: 'GET',
  url: 'https://127.0.0.1/x',
  headers: new Headers({ 'x-request-id': 'req-14' }),
};
const transport = { remoteAddress: '127.0.0.1' };

function recording() {
  const reports: { outcome: Outcome; answer: Response | object }[] = [];
  const report: Report = (_head, _transport, _started, _id, outcome, answer) =>
    reports.push({ outcome, answer });
  return { reports, exchange: exchanger(report, silentLogger) };
}

describe('exchanger', () => {
  it('runs the steps with the request id, finishes the answer and reports that very answer once', async () => {
    const { reports, exchange } = recording();
    const answer = await exchange(
      head,
      transport,
      async (requestId, outcome) => {
        outcome.route = '/x';
        return Response.json({ requestId });
      },
      (a) => a as Response,
    );
    expect(await answer.json()).toEqual({ requestId: 'req-14' });
    expect(answer.headers.get('x-request-id')).toBe('req-14');
    expect(reports).toHaveLength(1);
    expect(reports[0]!.answer).toBe(answer);
    expect(reports[0]!.outcome.route).toBe('/x');
  });

  it('answers what the steps throw with the problem of the error, reported like any answer', async () => {
    const { reports, exchange } = recording();
    const answer = await exchange(
      head,
      transport,
      async () => {
        throw new CertwrightError('unavailable', 'storage is down');
      },
      (a) => a,
    );
    expect(answer.status).toBe(503);
    expect(reports[0]!.outcome.route).toBe('unmatched');
  });

  it('keeps a written answer written when the entry wants it so, with the request id', async () => {
    const { exchange } = recording();
    const answer = await exchange(
      head,
      transport,
      async (_id, outcome) => {
        outcome.protocol = true;
        return { status: 200, headers: { 'content-length': '0' }, body: new Uint8Array(0) };
      },
      (a) => a,
    );
    expect(answer).not.toBeInstanceOf(Response);
    expect((answer as { headers: Record<string, string> }).headers['x-request-id']).toBe('req-14');
  });
});
