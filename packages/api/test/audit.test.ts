import type { AuditEvent } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpsApp, createTarget, type OpsApp, registerAgent, seedCertificate } from './ops-support.js';

let app: OpsApp;
beforeAll(async () => {
  app = await createOpsApp();
}, 60_000);
afterAll(() => app?.close());

/** Parses an NDJSON body back into events, with dates revived for hash verification. */
async function exportEvents(
  query = '',
): Promise<{ status: number; contentType: string | null; events: AuditEvent[]; raw: string }> {
  const res = await app.call('GET', `/api/v1/audit/export${query}`);
  const raw = await res.text();
  const events = raw
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const e = JSON.parse(line);
      return { ...e, occurred_at: new Date(e.occurred_at) } as AuditEvent;
    });
  return { status: res.status, contentType: res.headers.get('content-type'), events, raw };
}

describe('scripted flow: register → heartbeat → bind → retire → export', { timeout: 60_000 }, () => {
  it('shows agent_retired and agent_retirement_cascaded with an intact hash chain', async () => {
    const agent = await registerAgent(app, 'flow-agent');
    app.clock.advance(1000);
    expect(
      (
        await app.call('POST', `/api/v1/agents/${agent.id}/heartbeat`, {
          key: agent.key,
          body: { version: '2.0.1' },
        })
      ).status,
    ).toBe(200);
    const target = await createTarget(app, agent.id);
    await seedCertificate(app, [target.id]);

    const blocked = await app.call('DELETE', `/api/v1/agents/${agent.id}?reason=move`);
    expect(blocked.status).toBe(409);
    expect(await blocked.json()).toMatchObject({
      active_targets: 1,
      active_certificates: 1,
      pending_jobs: 0,
    });

    app.clock.advance(1000);
    const retired = await app.call(
      'DELETE',
      `/api/v1/agents/${agent.id}?force=true&reason=datacenter+closed`,
    );
    expect(retired.status).toBe(200);

    const exported = await exportEvents();
    expect(exported.status).toBe(200);
    expect(exported.contentType).toMatch(/^application\/x-ndjson/);
    expect(exported.raw.endsWith('\n')).toBe(true);
    const mine = exported.events.filter((e) => e.resource_id === agent.id || e.resource_id === target.id);
    expect(mine.map((e) => e.action)).toEqual([
      'agent_registered',
      'target_created',
      'agent_retired',
      'agent_retirement_cascaded',
    ]);
    const cascaded = mine[3] as AuditEvent;
    expect(cascaded).toMatchObject({
      actor: 'api-key',
      actor_type: 'api_key',
      category: 'config',
      resource_type: 'agent',
    });
    expect(cascaded.details).toMatchObject({ targets_retired: 1, reason: 'datacenter closed' });
    // The export starts at the first event here and links up to the head the API reports.
    expect(exported.events[0]?.seq).toBe(1);
    exported.events.forEach((e, i) => {
      expect(e.prev_hash).toBe(i === 0 ? '0'.repeat(64) : exported.events[i - 1]?.hash);
    });
    const newest = exported.events.at(-1) as AuditEvent;
    expect(await (await app.call('GET', '/api/v1/audit/verify')).json()).toEqual({
      ok: true,
      checked: exported.events.length,
      head_seq: newest.seq,
      head_hash: newest.hash,
    });
  });
});

describe('audit export parameters (spec §4.16, §8)', { timeout: 30_000 }, () => {
  it('rejects bad parameters with 400 naming the field', async () => {
    const cases: [string, string][] = [
      ['?limit=0', 'limit'],
      ['?limit=100001', 'limit'],
      ['?limit=ten', 'limit'],
      ['?category=billing', 'category'],
      ['?from=yesterday', 'from'],
      ['?from=2026-01-01T00:00:00Z&to=2026-04-02T00:00:00Z', 'from'],
      ['?from=2026-03-01T00:00:00Z&to=2026-02-01T00:00:00Z', 'from'],
      ['?from=2025-11-01T00:00:00Z', 'from'],
    ];
    for (const [query, field] of cases) {
      const res = await app.call('GET', `/api/v1/audit/export${query}`);
      expect(res.status, query).toBe(400);
      expect(
        (await res.json()).errors.map((e: { field: string }) => e.field),
        query,
      ).toContain(field);
    }
    // Exactly 90 days is allowed.
    expect((await exportEvents('?from=2026-01-01T00:00:00Z&to=2026-04-01T00:00:00Z')).status).toBe(200);
  });

  it('answers an empty range with an empty 200 stream', async () => {
    const empty = await exportEvents('?from=2025-12-01T00:00:00Z&to=2025-12-02T00:00:00Z');
    expect(empty.status).toBe(200);
    expect(empty.raw).toBe('');
  });

  it('filters by category and range and honours limit', async () => {
    await registerAgent(app, 'category-auth');
    const auth = await exportEvents('?category=auth');
    expect(auth.events.length).toBeGreaterThan(0);
    expect(auth.events.every((e) => e.category === 'auth')).toBe(true);
    const limited = await exportEvents('?limit=2');
    expect(limited.events).toHaveLength(2);
    const now = app.clock.now();
    app.clock.advance(60_000);
    const later = await registerAgent(app, 'after-cut');
    const after = await exportEvents(
      `?from=${encodeURIComponent(new Date(now.getTime() + 1).toISOString())}`,
    );
    expect(after.events.map((e) => e.resource_id)).toEqual([later.id]);
  });

  it('streams 2,500 events page by page without changing the result', async () => {
    const storage = app.services.deps.storage;
    const before = (await storage.audit.head())?.seq ?? 0;
    for (let i = 0; i < 2500; i++) {
      await app.services.audit.record(
        { type: 'system', id: 'system' },
        { action: 'bulk_fill', category: 'cert_lifecycle', resource_type: 'test', resource_id: `r-${i}` },
      );
    }
    const all = await exportEvents('?category=cert_lifecycle');
    const fill = all.events.filter((e) => e.action === 'bulk_fill');
    expect(fill).toHaveLength(2500);
    expect(fill[0]?.seq).toBeGreaterThan(before);
    expect(fill.every((e, i) => i === 0 || e.seq === (fill[i - 1] as AuditEvent).seq + 1)).toBe(true);
  }, 120_000);

  it('is admin-only: an agent key gets 403', async () => {
    const agent = await registerAgent(app, 'no-export');
    expect((await app.call('GET', '/api/v1/audit/export', { key: agent.key })).status).toBe(403);
    expect((await app.call('GET', '/api/v1/audit/verify', { key: agent.key })).status).toBe(403);
  });
});

describe('chain verification', { timeout: 30_000 }, () => {
  it('reports the first tampered event, and the head to anchor elsewhere', async () => {
    const open = await createOpsApp();
    try {
      for (const name of ['one', 'two', 'three']) await registerAgent(open, name);
      const head = await open.call('GET', '/api/v1/audit/head');
      expect(head.status).toBe(200);
      const anchored = await head.json();
      const third = (await open.services.deps.storage.audit.list()).items[0] as AuditEvent;
      expect(anchored).toEqual({ seq: 3, hash: third.hash, keyed_from_seq: 1 });
      expect(await (await open.call('GET', '/api/v1/audit/verify')).json()).toEqual({
        ok: true,
        checked: 3,
        head_seq: 3,
        head_hash: third.hash,
      });
      const against = `/api/v1/audit/verify?anchor_seq=3&anchor_hash=${anchored.hash}`;
      expect(await (await open.call('GET', against)).json()).toMatchObject({ ok: true, checked: 3 });
      const elsewhere = await open.call(
        'GET',
        `/api/v1/audit/verify?anchor_seq=2&anchor_hash=${anchored.hash}`,
      );
      expect(await elsewhere.json()).toMatchObject({
        ok: false,
        broken_at: 2,
        reason: 'differs from the anchor',
      });
      const half = await open.call('GET', '/api/v1/audit/verify?anchor_seq=3');
      expect(half.status).toBe(400);
      expect((await half.json()).errors).toEqual([
        { field: 'anchor_hash', message: 'anchor_seq and anchor_hash go together' },
      ]);

      // Tamper with the stored details of event 2, as someone with database access might.
      // biome-ignore lint/suspicious/noExplicitAny: the Kysely handle of the SQL storage, reached past the port on purpose
      const db = (open.services.deps.storage as unknown as { db: { updateTable(t: string): any } }).db;
      await db
        .updateTable('audit_events')
        .set({ details: JSON.stringify({ name: 'forged' }) })
        .where('seq', '=', 2)
        .execute();
      const report = await (await open.call('GET', '/api/v1/audit/verify')).json();
      expect(report).toMatchObject({ ok: false, broken_at: 2, checked: 1, reason: 'hash mismatch' });
    } finally {
      await open.close();
    }
  }, 60_000);

  it('keeps the head route admin-only', async () => {
    const agent = await registerAgent(app, 'no-head');
    expect((await app.call('GET', '/api/v1/audit/head', { key: agent.key })).status).toBe(403);
  });
});
