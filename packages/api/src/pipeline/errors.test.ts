import { CertwrightError, type Logger, silentLogger } from '@certwright/core';
import { describe, expect, it } from 'vitest';
import { errorResponse } from './errors.js';

function recordingLogger(): Logger & { lines: unknown[] } {
  const lines: unknown[] = [];
  const logger: Logger & { lines: unknown[] } = Object.assign(Object.create(silentLogger), {
    lines,
    error: (fields: unknown, message: string) => lines.push({ fields, message }),
  });
  return logger;
}

describe('errorResponse', () => {
  it("answers a domain error with its problem and status, unlogged when it is the caller's", async () => {
    const logger = recordingLogger();
    const response = errorResponse(new CertwrightError('not_found', 'no such certificate'), 'req-12', logger);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: 'not_found', request_id: 'req-12' });
    expect(logger.lines).toHaveLength(0);
  });

  it('logs an unexpected error with the request id and answers a fixed detail: no message or stack reaches the client', async () => {
    const logger = recordingLogger();
    const response = errorResponse(new Error('SELECT * FROM secrets at /srv/app.js:1'), 'req-13', logger);
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).not.toMatch(/SELECT|secrets|app\.js/);
    expect(JSON.parse(text)).toMatchObject({ error: 'internal', request_id: 'req-13' });
    expect(logger.lines).toMatchObject([{ fields: { request_id: 'req-13' }, message: 'unexpected error' }]);
  });
});
