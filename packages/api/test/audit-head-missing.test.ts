import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * The audit trail's head row deleted in the database (docs/api/audit.md): verification answers
 * a broken trail instead of failing, and every audited change is refused with a clear 503 that
 * names the cause, not a generic 500. Storage engines are held to the same by the audit head
 * contract (describeAuditHeadLoss).
 */
describe('the audit head row is gone', () => {
  let app: TestApp;
  let newest: number;
  beforeAll(async () => {
    app = await createTestApp();
    const made = await app.call('POST', '/api/v1/owners', { name: 'before', email: 'before@example.test' });
    expect(made.status).toBe(201);
    newest = (await app.call('GET', '/api/v1/audit/head')).body.seq;
    await app.storage.db.deleteFrom('audit_head').execute();
  }, 180_000);
  afterAll(() => app?.close());

  it('verification reports ok: false at the newest event with the reason', async () => {
    const res = await app.call('GET', '/api/v1/audit/verify');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ok: false,
      checked: 0,
      broken_at: newest,
      reason: 'the stored head is missing',
      head_seq: null,
      head_hash: null,
    });
  });

  it('refuses audited changes and the head read with 503 naming the missing head; nothing is stored', async () => {
    for (const [method, path, body] of [
      ['POST', '/api/v1/owners', { name: 'after', email: 'after@example.test' }],
      ['GET', '/api/v1/audit/head', undefined],
    ] as const) {
      const res = await app.call(method, path, body);
      expect(res.status, path).toBe(503);
      expect(res.body, path).toMatchObject({
        error: 'unavailable',
        detail: expect.stringContaining("the audit trail's stored head is missing"),
      });
    }
    const owners = await app.call('GET', '/api/v1/owners?search=after');
    expect(owners.body.total).toBe(0);
  });
});
