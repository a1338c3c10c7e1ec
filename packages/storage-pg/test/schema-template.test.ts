import { ManualClock, SecretBox } from '@certwright/core';
import { type Kysely, sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createPgliteStorage, type MaintainedStorage } from '../src/index.js';
import { createMigratedPgliteStorage } from '../src/testing.js';

/** Everything a migration decides: columns, indexes, constraints, and the migration record. */
async function schemaOf(db: Kysely<unknown>): Promise<unknown> {
  const columns = await sql`
    select table_name, column_name, data_type, is_nullable, column_default
    from information_schema.columns where table_schema = 'public'
    order by table_name, column_name`.execute(db);
  const indexes = await sql`
    select tablename, indexname, indexdef from pg_indexes where schemaname = 'public'
    order by tablename, indexname`.execute(db);
  const constraints = await sql`
    select conrelid::regclass::text as tab, conname, pg_get_constraintdef(oid) as def
    from pg_constraint where connamespace = 'public'::regnamespace order by tab, conname`.execute(db);
  const migrations = await sql`select version, name from cw_schema_migrations order by version`.execute(db);
  return {
    columns: columns.rows,
    indexes: indexes.rows,
    constraints: constraints.rows,
    migrations: migrations.rows,
  };
}

/** The seeded baseline without its sealed column (sealed values differ by nonce, not meaning). */
async function baselineOf(storage: MaintainedStorage): Promise<unknown> {
  return {
    profiles: (await storage.profiles.list({ page: 1, perPage: 50 })).items,
    owners: (await storage.owners.list({ page: 1, perPage: 50 })).items,
    issuers: (await storage.issuers.list({ page: 1, perPage: 50 })).items,
  };
}

describe('the migrated schema template for tests', () => {
  const clock = new ManualClock('2026-01-01T00:00:00Z');
  const secretBox = new SecretBox(SecretBox.generateKey());
  const opened: MaintainedStorage[] = [];
  afterAll(async () => {
    for (const s of opened) await s.close();
  });

  it('gives the same schema, baseline and sealed audit head as a fresh database migrated from zero', async () => {
    const fresh = await createPgliteStorage({ memory: true }, { secretBox, clock });
    opened.push(fresh);
    await fresh.migrate();
    const copy = await createMigratedPgliteStorage({ secretBox, clock });
    opened.push(copy);

    expect(await schemaOf(copy.db as Kysely<unknown>)).toEqual(await schemaOf(fresh.db as Kysely<unknown>));
    expect(await baselineOf(copy)).toEqual(await baselineOf(fresh));
    // The head is sealed under this key: the empty trail verifies, and so does one appended to.
    expect((await copy.audit.verify()).ok).toBe(true);
    await copy.audit.append({
      actor: 'admin',
      actor_type: 'api_key',
      action: 'certificate_created',
      resource_type: 'certificate',
      resource_id: 'mc-1',
      category: 'cert_lifecycle',
      details: {},
    });
    expect((await copy.audit.verify()).ok).toBe(true);
    // The seeded Local CA's sealed configuration opens with this key.
    expect(await copy.issuers.getWithConfig('iss-local')).toMatchObject({ id: 'iss-local', config: {} });
  });

  it('keeps copies apart: a write to one is not in the next', async () => {
    const first = await createMigratedPgliteStorage({ secretBox, clock });
    opened.push(first);
    await first.owners.create({ id: 'own-only-in-first', name: 'First only', email: 'first@example.com' });
    const second = await createMigratedPgliteStorage({ secretBox, clock });
    opened.push(second);
    expect(await second.owners.get('own-only-in-first')).toBeNull();
    expect(await first.owners.get('own-only-in-first')).not.toBeNull();
  });
});
