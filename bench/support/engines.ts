import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecretBox } from '../../packages/core/src/index.js';
import { createMysqlStorage } from '../../packages/storage-mysql/src/index.js';
import { createPgliteStorage, createPostgresStorage } from '../../packages/storage-pg/src/index.js';
import type { SqlStorage } from '../../packages/storage-sql/src/index.js';

// The root package does not depend on pg; borrow the storage package's copy.
const pg = createRequire(new URL('../../packages/storage-pg/package.json', import.meta.url))('pg') as {
  Client: new (o: {
    connectionString: string;
  }) => {
    connect(): Promise<unknown>;
    query(q: string): Promise<unknown>;
    end(): Promise<void>;
  };
};

// Likewise mysql2, from the MySQL storage package.
const mysql = createRequire(new URL('../../packages/storage-mysql/package.json', import.meta.url))(
  'mysql2/promise',
) as {
  createConnection(o: { uri: string }): Promise<{ query(q: string): Promise<unknown>; end(): Promise<void> }>;
};

const PG_URL = process.env.SVC_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MYSQL_URL = process.env.SVC_BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

export interface BenchStorage {
  s: SqlStorage;
  /** Removes what the run created: the PGlite directory or the PostgreSQL database. */
  cleanup: () => Promise<void>;
  /** The PostgreSQL or MySQL/MariaDB database created for the run (absent on PGlite). */
  database?: string;
  /** Its connection URL, for a server started on it (absent on PGlite). */
  url?: string;
  /** The PGlite directory (absent on the servers). */
  dataDir?: string;
}

/**
 * Opens an empty, unmigrated storage for one run: PGlite in a fresh temporary directory, or
 * PostgreSQL in a database created for the run on SVC_BENCH_POSTGRES_URL (default the local
 * test server), or `mysql` (MySQL/MariaDB) likewise on SVC_BENCH_MYSQL_URL. `prefix` (e.g.
 * `cw-bench-inv`) names the directory and the database, so that leftovers of an interrupted run
 * show which benchmark made them. Throws when the server cannot be reached or the database cannot
 * be created. `encryptionKey` seals the secrets the migrations write, for a server started on the
 * database afterwards with the same SVC_ENCRYPTION_KEY. `existing` opens a database (or PGlite
 * directory) kept by an earlier run instead; its cleanup removes nothing.
 */
export async function openBenchStorage(
  engine: string,
  prefix: string,
  options: { maxConnections?: number; encryptionKey?: Uint8Array; existing?: string } = {},
): Promise<BenchStorage> {
  const { encryptionKey, existing, ...pool } = options;
  const box = new SecretBox(encryptionKey ?? SecretBox.generateKey());
  if (existing !== undefined) {
    const keep = async () => {};
    if (engine === 'pglite')
      return { s: await createPgliteStorage({ dataDir: existing }, { secretBox: box }), cleanup: keep };
    const url = new URL(engine === 'mysql' ? MYSQL_URL : PG_URL);
    url.pathname = `/${existing}`;
    const s =
      engine === 'mysql'
        ? createMysqlStorage(url.toString(), { secretBox: box, ...pool })
        : createPostgresStorage(url.toString(), { secretBox: box, ...pool });
    return { s, database: existing, url: url.toString(), cleanup: keep };
  }
  if (engine === 'pglite') {
    const dir = await mkdtemp(join(tmpdir(), `${prefix}-`));
    const s = await createPgliteStorage({ dataDir: dir }, { secretBox: box });
    return { s, dataDir: dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
  }
  const name = `${prefix.replaceAll('-', '_')}_${randomBytes(4).toString('hex')}`;
  if (engine === 'mysql') return openMysql(name, box, pool);
  const admin = new pg.Client({ connectionString: PG_URL });
  try {
    await admin.connect();
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end().catch(() => {});
  }
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  // As the server reads it: `SVC_DATABASE_PREPARED_STATEMENTS=false` compares without named statements.
  const preparedStatements = process.env.SVC_DATABASE_PREPARED_STATEMENTS !== 'false';
  const s = createPostgresStorage(url.toString(), { secretBox: box, preparedStatements, ...pool });
  return {
    s,
    database: name,
    url: url.toString(),
    cleanup: async () => {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

async function openMysql(
  name: string,
  box: SecretBox,
  pool: { maxConnections?: number },
): Promise<BenchStorage> {
  const admin = await mysql.createConnection({ uri: MYSQL_URL });
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end().catch(() => {});
  }
  const url = new URL(MYSQL_URL);
  url.pathname = `/${name}`;
  const s = createMysqlStorage(url.toString(), { secretBox: box, ...pool });
  return {
    s,
    database: name,
    url: url.toString(),
    cleanup: async () => {
      const c = await mysql.createConnection({ uri: MYSQL_URL });
      await c.query(`drop database if exists ${name}`);
      await c.end();
    },
  };
}
