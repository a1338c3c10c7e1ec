import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const PG_ADMIN_URL = process.env.SVC_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const required = process.env.SVC_TEST_REQUIRE_SERVICES === '1';

/** Why PostgreSQL tests are skipped, or undefined when the server answers. Throws when required. */
export async function postgresSkipReason(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (error) {
    const reason = `PostgreSQL at ${new URL(PG_ADMIN_URL).host} unreachable: ${(error as Error).message}`;
    if (required) throw new Error(`SVC_TEST_REQUIRE_SERVICES=1 but ${reason}`);
    return reason;
  } finally {
    await client.end().catch(() => {});
  }
}

/** A database of its own for one test file; other engineers' runs share the server. */
export async function createTempDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `cw_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}
