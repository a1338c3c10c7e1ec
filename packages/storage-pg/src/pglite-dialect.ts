import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

/**
 * PGlite is one Postgres backend in this process: one session, so one Kysely connection at a
 * time. Callers queue for it; a transaction holds it until commit or rollback. (Consequence: code
 * inside `storage.transaction(fn)` must use the `tx` it is given, or it waits for itself.)
 */
class PgliteConnection implements DatabaseConnection {
  constructor(private readonly pg: PGlite) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const res = await this.pg.query<R>(query.sql, query.parameters as unknown[], { rowMode: 'object' });
    const kind = query.query?.kind;
    const writes =
      kind === 'InsertQueryNode' ||
      kind === 'UpdateQueryNode' ||
      kind === 'DeleteQueryNode' ||
      kind === 'MergeQueryNode';
    return writes || res.affectedRows !== undefined
      ? { rows: res.rows, numAffectedRows: BigInt(res.affectedRows ?? 0) }
      : { rows: res.rows };
  }

  // biome-ignore lint/correctness/useYield: PGlite has no cursors; streaming is not offered
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite driver does not support streaming; page with keyset queries instead');
  }
}

class PgliteDriver implements Driver {
  readonly #pg: PGlite;
  readonly #connection: PgliteConnection;
  #tail: Promise<void> = Promise.resolve();
  #release: (() => void) | undefined;

  constructor(pg: PGlite) {
    this.#pg = pg;
    this.#connection = new PgliteConnection(pg);
  }

  async init(): Promise<void> {
    await this.#pg.waitReady;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const previous = this.#tail;
    let release!: () => void;
    this.#tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    await previous;
    this.#release = release;
    return this.#connection;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const level = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : '';
    await connection.executeQuery(CompiledQuery.raw(`begin${level}`));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(): Promise<void> {
    const release = this.#release;
    this.#release = undefined;
    release?.();
  }

  async destroy(): Promise<void> {
    // Wait for whoever holds the connection, so close never cuts a transaction in half.
    await this.#tail;
    if (!this.#pg.closed) await this.#pg.close();
  }
}

/** A Kysely dialect over one open PGlite instance: PostgreSQL's SQL, one queued connection. */
export class PgliteDialect implements Dialect {
  constructor(private readonly pg: PGlite) {}
  /** PostgreSQL's adapter: PGlite is PostgreSQL. */
  createAdapter() {
    return new PostgresAdapter();
  }
  /** The driver that queues callers for PGlite's one session. */
  createDriver(): Driver {
    return new PgliteDriver(this.pg);
  }
  /** PostgreSQL's introspector over `db`. */
  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
  /** PostgreSQL's query compiler. */
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
}
