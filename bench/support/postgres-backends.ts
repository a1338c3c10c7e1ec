import { createRequire } from 'node:module';
import { processCpuMs } from './proc-cpu.js';

// The root package does not depend on pg; borrow the storage package's copy.
const pg = createRequire(new URL('../../packages/storage-pg/package.json', import.meta.url))('pg') as {
  Client: new (o: {
    connectionString: string;
  }) => {
    connect(): Promise<unknown>;
    query(q: string, values: unknown[]): Promise<{ rows: unknown[] }>;
    end(): Promise<void>;
  };
};

/**
 * A reader of the CPU (user + system, ms) used so far by the PostgreSQL backends serving
 * `database` on this machine (/proc is readable): a server's database share, read from
 * outside it like the server's own time. It asks pg_stat_activity through a connection to
 * SVC_BENCH_POSTGRES_URL's database, so its own backend is not among those counted; a backend
 * that ended between two reads takes its time with it, so keep the server's pool open across
 * a measurement.
 */
export function postgresBackendsCpuMs(database: string): () => Promise<number> {
  const url = process.env.SVC_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  return async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query('select pid from pg_stat_activity where datname = $1', [database]);
      let total = 0;
      for (const { pid } of rows as { pid: number }[]) {
        try {
          total += processCpuMs(pid);
        } catch {
          // A backend that ended between the query and the read: its time is gone either way.
        }
      }
      return total;
    } finally {
      await client.end();
    }
  };
}
