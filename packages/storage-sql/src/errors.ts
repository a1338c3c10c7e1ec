import { CertwrightError } from '@certwright/core';
import type {
  CompiledQuery,
  DatabaseConnection,
  Dialect,
  Driver,
  Kysely,
  QueryResult,
  TransactionSettings,
} from 'kysely';

interface DriverErrorShape {
  code?: unknown;
  errno?: unknown;
  message?: unknown;
  detail?: unknown;
  constraint?: unknown;
  table?: unknown;
}

const PG_UNAVAILABLE = new Set(['57P01', '57P02', '57P03', '53300', '53400', '40P01', '40001', '55P03']);
const MYSQL_UNAVAILABLE_ERRNO = new Set([1040, 1053, 1205, 1213, 2002, 2003, 2006, 2013]);
const NET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
]);
const LOST_MESSAGES = [
  /connection terminated/i,
  /connection (?:is )?(?:in )?closed state/i,
  /not queryable/i,
  /timeout exceeded when trying to connect/i,
  /cannot use a pool after calling end/i,
  /pool is closed/i,
  /connection lost/i,
  /PGlite is closed/i,
];

/**
 * Maps an error thrown by pg, PGlite or mysql2 to a CertwrightError. The SQL text and bound
 * parameters are never copied into the message (they may hold sealed secrets or personal
 * data); the original stays available as `cause` for logs.
 */
export function translateDriverError(error: unknown): CertwrightError {
  if (error instanceof CertwrightError) return error;
  const e = (typeof error === 'object' && error !== null ? error : {}) as DriverErrorShape;
  const code = typeof e.code === 'string' ? e.code : undefined;
  const errno = typeof e.errno === 'number' ? e.errno : undefined;
  const message = typeof e.message === 'string' ? e.message : String(error);
  const constraint = typeof e.constraint === 'string' ? e.constraint : mysqlKeyName(message);
  const extra = constraint ? { constraint } : undefined;

  // PostgreSQL and PGlite report SQLSTATE in `code`.
  if (code === '23505')
    return new CertwrightError('conflict', 'a record with this value already exists', {
      cause: error,
      extra,
    });
  if (code === '23503') {
    const detail = typeof e.detail === 'string' ? e.detail : message;
    return /still referenced/i.test(detail)
      ? new CertwrightError('conflict', 'the record is still referenced by other records', {
          cause: error,
          extra,
        })
      : new CertwrightError('invalid_reference', 'a referenced record does not exist', {
          cause: error,
          extra,
        });
  }
  if (code === '22001' || code === '22003' || code === '23502' || code === '23514') {
    return new CertwrightError('validation_failed', 'a value does not fit its column', {
      cause: error,
      extra,
    });
  }
  if (code && (code.startsWith('08') || PG_UNAVAILABLE.has(code))) {
    return new CertwrightError('unavailable', 'the database is unavailable', { cause: error });
  }

  // MySQL and MariaDB report a numeric errno.
  if (errno === 1062 || errno === 1586)
    return new CertwrightError('conflict', 'a record with this value already exists', {
      cause: error,
      extra,
    });
  if (errno === 1452 || errno === 1216)
    return new CertwrightError('invalid_reference', 'a referenced record does not exist', {
      cause: error,
      extra,
    });
  if (errno === 1451 || errno === 1217)
    return new CertwrightError('conflict', 'the record is still referenced by other records', {
      cause: error,
      extra,
    });
  if (errno === 1406 || errno === 1264 || errno === 1048)
    return new CertwrightError('validation_failed', 'a value does not fit its column', {
      cause: error,
      extra,
    });
  if (errno !== undefined && MYSQL_UNAVAILABLE_ERRNO.has(errno)) {
    return new CertwrightError('unavailable', 'the database is unavailable', { cause: error });
  }

  if ((code && NET_CODES.has(code)) || LOST_MESSAGES.some((re) => re.test(message))) {
    return new CertwrightError('unavailable', 'the database is unavailable', { cause: error });
  }
  return new CertwrightError('internal', 'database error', { cause: error });
}

function mysqlKeyName(message: string): string | undefined {
  return /for key '(?:[^'.]*\.)?([^']+)'/.exec(message)?.[1] ?? /CONSTRAINT `([^`]+)`/.exec(message)?.[1];
}

async function translated<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw translateDriverError(error);
  }
}

class TranslatingConnection implements DatabaseConnection {
  constructor(readonly inner: DatabaseConnection) {}
  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return translated(() => this.inner.executeQuery<R>(query));
  }
  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    try {
      yield* this.inner.streamQuery<R>(query, chunkSize);
    } catch (error) {
      throw translateDriverError(error);
    }
  }
}

const unwrap = (c: DatabaseConnection): DatabaseConnection =>
  c instanceof TranslatingConnection ? c.inner : c;

class TranslatingDriver implements Driver {
  constructor(private readonly inner: Driver) {}
  init(): Promise<void> {
    return translated(() => this.inner.init());
  }
  async acquireConnection(): Promise<DatabaseConnection> {
    return new TranslatingConnection(await translated(() => this.inner.acquireConnection()));
  }
  beginTransaction(c: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return translated(() => this.inner.beginTransaction(unwrap(c), settings));
  }
  commitTransaction(c: DatabaseConnection): Promise<void> {
    return translated(() => this.inner.commitTransaction(unwrap(c)));
  }
  rollbackTransaction(c: DatabaseConnection): Promise<void> {
    return translated(() => this.inner.rollbackTransaction(unwrap(c)));
  }
  releaseConnection(c: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(unwrap(c));
  }
  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/**
 * Wraps a Kysely dialect so that every driver error, including failures to connect, begin or
 * commit, leaves as a CertwrightError. Repositories then never see raw driver errors.
 */
export function withErrorTranslation(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new TranslatingDriver(dialect.createDriver()),
    createIntrospector: (db: Kysely<unknown>) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
  };
}

/** True for a deadlock or serialization failure: the transaction may simply be run again. */
export function isRetryableConflict(error: unknown): boolean {
  const cause = (error as { cause?: DriverErrorShape } | null)?.cause ?? (error as DriverErrorShape | null);
  return cause?.errno === 1213 || cause?.code === '40P01' || cause?.code === '40001';
}

/**
 * Runs a short claim transaction again when the engine aborted it as a deadlock victim.
 * InnoDB picks victims even among SKIP LOCKED claimers because the claim's UPDATE touches
 * secondary-index entries; retrying is the documented remedy.
 */
export async function retryOnDeadlock<T>(run: () => Promise<T>, attempts = 8): Promise<T> {
  for (let i = 1; ; i += 1) {
    try {
      return await run();
    } catch (error) {
      if (i >= attempts || !isRetryableConflict(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 5 * i)));
    }
  }
}
