import { SecretBox } from '@certwright/core';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStorage, type MaintainedStorage } from '../src/index.js';
import { StatementNames } from '../src/prepared.js';
import { createTempDatabase, postgresSkipReason } from './helpers.js';

describe('StatementNames', () => {
  it('names a text from its second execution on, always the same name', () => {
    const names = new StatementNames();
    expect(names.nameOf('select 1 where $1')).toBeUndefined();
    const name = names.nameOf('select 1 where $1');
    expect(name).toMatch(/^cw_\d+$/);
    expect(names.nameOf('select 1 where $1')).toBe(name);
  });

  it('never names a statement with a LIKE pattern, whose plan depends on the pattern', () => {
    const names = new StatementNames({ after: 1 });
    for (let i = 0; i < 10; i++) {
      expect(names.nameOf('select id from t where owner = $1 and text like $2')).toBeUndefined();
      expect(names.nameOf('SELECT id FROM t WHERE text ILIKE $1')).toBeUndefined();
    }
    expect(names.nameOf('select id from t where likes = $1')).toMatch(/^cw_\d+$/);
    expect(names.size).toBe(1);
  });

  it('names no more texts than its budget, so neither side holds an unbounded set', () => {
    const names = new StatementNames({ after: 1, max: 3 });
    const named = Array.from({ length: 10 }, (_, i) => names.nameOf(`select $1 + ${i}`));
    expect(named.filter(Boolean)).toHaveLength(3);
    expect(names.size).toBe(3);
  });

  it('gives a stale text one fresh name, however many connections report it', () => {
    const names = new StatementNames({ after: 1 });
    const old = names.nameOf('select * from t where id = $1')!;
    const fresh = names.renameStale('select * from t where id = $1', old);
    expect(fresh).not.toBe(old);
    expect(names.renameStale('select * from t where id = $1', old)).toBe(fresh);
    expect(names.nameOf('select * from t where id = $1')).toBe(fresh);
  });
});

const pgSkip = await postgresSkipReason();
if (pgSkip) console.warn(`prepared statements on PostgreSQL skipped: ${pgSkip}`);

describe.skipIf(pgSkip !== undefined)('named statements on PostgreSQL', () => {
  let temp: Awaited<ReturnType<typeof createTempDatabase>>;
  let storage: MaintainedStorage;
  let admin: pg.Client;

  beforeAll(async () => {
    temp = await createTempDatabase();
    storage = createPostgresStorage(temp.url, {
      secretBox: new SecretBox(SecretBox.generateKey()),
      maxConnections: 1,
    });
    admin = new pg.Client({ connectionString: temp.url });
    await admin.connect();
    await admin.query('create table t (id int primary key, a text)');
    await admin.query(`insert into t values (1, 'one'), (2, 'two')`);
  });
  afterAll(async () => {
    await admin?.end().catch(() => {});
    await storage?.close();
    await temp?.drop();
  });

  const preparedCount = async () =>
    Number(
      (await sql<{ n: string }>`select count(*) as n from pg_prepared_statements`.execute(storage.db))
        .rows[0]!.n,
    );

  it('prepares a repeated statement once on the connection and answers it from there on', async () => {
    const read = (id: number) =>
      storage.db
        .selectFrom('t' as never)
        .selectAll()
        .where('id' as never, '=', id as never)
        .execute();
    expect(await read(1)).toEqual([{ id: 1, a: 'one' }]);
    expect(await preparedCount()).toBe(0);
    expect(await read(2)).toEqual([{ id: 2, a: 'two' }]);
    expect(await read(1)).toEqual([{ id: 1, a: 'one' }]);
    expect(await preparedCount()).toBe(1);
  });

  it('answers a `select *` whose table gained a column meanwhile (a migration by another instance)', async () => {
    const read = () =>
      storage.db
        .selectFrom('t' as never)
        .selectAll()
        .where('id' as never, '=', 1 as never)
        .execute();
    await read();
    await read();
    await admin.query(`alter table t add column b text not null default 'new'`);
    expect(await read()).toEqual([{ id: 1, a: 'one', b: 'new' }]);
    expect(await read()).toEqual([{ id: 1, a: 'one', b: 'new' }]);
  });

  it('answers a statement first named inside a transaction that failed and rolled back', async () => {
    const read = (db: typeof storage.db) =>
      db
        .selectFrom('t' as never)
        .select('a' as never)
        .where('id' as never, '<', 2 as never)
        .execute();
    await read(storage.db);
    await expect(
      storage.db.transaction().execute(async (trx) => {
        // Its second execution: named and prepared here, inside the transaction.
        expect(await read(trx)).toEqual([{ a: 'one' }]);
        await sql`select 1/0`.execute(trx);
      }),
    ).rejects.toThrow();
    await expect(
      storage.db.transaction().execute(async (trx) => {
        await sql`select 1/0`.execute(trx);
      }),
    ).rejects.toThrow();
    expect(await read(storage.db)).toEqual([{ a: 'one' }]);
    expect(await read(storage.db)).toEqual([{ a: 'one' }]);
  });

  it('sends nothing named when turned off (PgBouncer in transaction mode)', async () => {
    const off = createPostgresStorage(temp.url, {
      secretBox: new SecretBox(SecretBox.generateKey()),
      maxConnections: 1,
      preparedStatements: false,
    });
    try {
      for (let i = 0; i < 3; i++)
        await off.db
          .selectFrom('t' as never)
          .select('a' as never)
          .where('id' as never, '=', 2 as never)
          .execute();
      const n = await sql<{ n: string }>`select count(*) as n from pg_prepared_statements`.execute(off.db);
      expect(Number(n.rows[0]!.n)).toBe(0);
    } finally {
      await off.close();
    }
  });
});
