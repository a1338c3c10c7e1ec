import { randomBytes } from 'node:crypto';
import { createConnection } from 'mysql2/promise';

export const MYSQL_ADMIN_URL = process.env.SVC_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const required = process.env.SVC_TEST_REQUIRE_SERVICES === '1';

const admin = () => {
  const u = new URL(MYSQL_ADMIN_URL);
  return createConnection({
    host: u.hostname,
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    connectTimeout: 3000,
  });
};

/** Why MariaDB/MySQL tests are skipped, or undefined when the server answers. Throws when required. */
export async function mysqlSkipReason(): Promise<string | undefined> {
  try {
    const c = await admin();
    await c.query('select 1');
    await c.end();
    return undefined;
  } catch (error) {
    const reason = `MySQL/MariaDB at ${new URL(MYSQL_ADMIN_URL).host} unreachable: ${(error as Error).message}`;
    if (required) throw new Error(`SVC_TEST_REQUIRE_SERVICES=1 but ${reason}`);
    return reason;
  }
}

/** A database of its own for one suite; other engineers' runs share the server. */
export async function createTempDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `cw_${randomBytes(6).toString('hex')}`;
  const c = await admin();
  await c.query(`create database ${name}`);
  await c.end();
  const url = new URL(MYSQL_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const d = await admin();
      await d.query(`drop database if exists ${name}`);
      await d.end();
    },
  };
}
