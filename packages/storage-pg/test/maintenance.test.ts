import { randomBytes } from 'node:crypto';
import { ManualClock, SecretBox } from '@certwright/core';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgliteStorage, createPostgresStorage, type MaintainedStorage } from '../src/index.js';
import { createMigratedPgliteStorage } from '../src/testing.js';

/**
 * PGlite runs no autovacuum daemon, so nothing but an explicit ANALYZE gives the planner
 * statistics. These tests read them where the planner does: pg_class.reltuples (-1 = never
 * analyzed) and pg_stat_user_tables.last_analyze.
 */

const clock = new ManualClock('2026-01-01T00:00:00Z');
let storage: MaintainedStorage;

const stats = async (table: string) => {
  const { rows } = await sql<{ reltuples: number; analyzed: boolean }>`
    select c.reltuples::float8 as reltuples, s.last_analyze is not null as analyzed
    from pg_class c join pg_stat_user_tables s on s.relid = c.oid
    where c.relname = ${table}`.execute(storage.db);
  return rows[0]!;
};

beforeAll(async () => {
  storage = await createMigratedPgliteStorage({ secretBox: new SecretBox(randomBytes(32)), clock });
}, 60_000);
afterAll(() => storage.close());

describe('PGlite maintenance (no autovacuum)', () => {
  it('analyzes every table right after migrations', async () => {
    for (const table of ['certificates', 'certificate_versions', 'teams', 'jobs', 'notification_events']) {
      const s = await stats(table);
      expect(s.analyzed, table).toBe(true);
      expect(s.reltuples, table).toBeGreaterThanOrEqual(0);
    }
  });

  it('lets the planner scan sequentially, as PostgreSQL does (PGlite starts with enable_seqscan off)', async () => {
    // With sequential scans priced out, a capped count of a common search term reads the whole
    // trigram index instead of scanning until it has its 1,001 rows.
    const { rows } = await sql<{ 'QUERY PLAN': string }>`
      explain select 1 from certificates where search_text like '%bench%' limit 1001`.execute(storage.db);
    expect(rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('Seq Scan on certificates');
  });

  it('maintain() refreshes the statistics a bulk load left stale', async () => {
    const before = await stats('teams');
    for (let i = 0; i < 300; i++) await storage.teams.create({ name: `bulk-team-${i}` });
    // Without autovacuum the planner still believes the pre-load row count.
    expect((await stats('teams')).reltuples).toBe(before.reltuples);
    const report = await storage.maintain();
    expect(report.analyzed).toBe(true);
    expect((await stats('teams')).reltuples).toBe(before.reltuples + 300);
  });
});

describe('PostgreSQL maintenance', () => {
  it('is a no-op (autovacuum keeps statistics) and does not even touch the server', async () => {
    // Port 9 (discard) on loopback: any query would fail, so a result proves no query ran.
    const pg = createPostgresStorage('postgres://nobody@127.0.0.1:9/none', {
      secretBox: new SecretBox(randomBytes(32)),
      connectionTimeoutMs: 500,
    });
    try {
      expect(await pg.maintain()).toEqual({ analyzed: false, durationMs: 0 });
    } finally {
      await pg.close();
    }
  });
});
