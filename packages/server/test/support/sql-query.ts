import pg from 'pg';

/**
 * One query on its own connection, for tests outside this package (test/upgrade) that check
 * what a server stored; `pg` resolves from here, not from the repository root.
 */
export async function queryRows<R = Record<string, unknown>>(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as R[];
  } finally {
    await client.end();
  }
}
