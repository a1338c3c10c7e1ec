import type pg from 'pg';

/**
 * Named (prepared) statements for the statements a process sends again and again.
 *
 * Kysely sends every query as an unnamed statement, which PostgreSQL parses, analyses and plans
 * anew on each execution. A statement text seen `after` times gets a name; from then on each
 * connection parses it once and executes it by name (the server keeps its plan). Only `max`
 * texts are ever named (queries whose text varies with their input — IN lists, bulk inserts —
 * stop being named once the budget is spent), and only `track` unnamed texts are counted, so
 * neither this process nor a backend holds an unbounded set.
 *
 * A named `select *` fails with "cached plan must not change result type" once a migration
 * (of another instance, during a rolling upgrade) changed the table's columns. The text then
 * gets a fresh name, which every connection prepares again; the failed query is sent once more
 * under it when it ran outside a transaction (inside one, the transaction is lost anyway and
 * fails as any other statement would).
 *
 * A statement with a LIKE pattern is never named. After five executions of a named statement
 * PostgreSQL may keep one generic plan for every value, and a generic plan cannot tell a rare
 * substring from one in every row: the certificate search, whose best plan depends on the pattern
 * (a trigram index lookup, an ordered walk, or an index-only scan of the owner's index entries;
 * docs/storage/README.md, "Inventory at scale"), would run the plan chosen for no pattern at all.
 * Such statements are parsed and planned on each execution, as unnamed ones always are.
 *
 * Behind PgBouncer in transaction mode before 1.21 (or with `max_prepared_statements = 0`) named
 * statements do not work: turn them off there (`SVC_DATABASE_PREPARED_STATEMENTS=false`).
 */
export interface PreparedStatementOptions {
  /** How many executions of a text before it is named; default 2. */
  after?: number;
  /** Texts named at most; default 200. */
  max?: number;
  /** Unnamed texts counted at most before the count starts over; default 2000. */
  track?: number;
}

/** LIKE or ILIKE: a statement whose best plan depends on its pattern's value. */
const PATTERN_MATCH = /\bi?like\b/i;

/** SQLSTATE 0A000 with this message: a prepared `select *` whose table changed its columns. */
const STALE_PLAN = /cached plan must not change result type/;

export class StatementNames {
  readonly #after: number;
  readonly #max: number;
  readonly #track: number;
  readonly #named = new Map<string, string>();
  readonly #seen = new Map<string, number>();
  #next = 0;

  constructor(options: PreparedStatementOptions = {}) {
    this.#after = options.after ?? 2;
    this.#max = options.max ?? 200;
    this.#track = options.track ?? 2000;
  }

  /** The name to send `text` under, or undefined: send it unnamed. */
  nameOf(text: string): string | undefined {
    if (PATTERN_MATCH.test(text)) return undefined;
    const named = this.#named.get(text);
    if (named !== undefined || this.#named.size >= this.#max) return named;
    const seen = (this.#seen.get(text) ?? 0) + 1;
    if (seen < this.#after) {
      if (this.#seen.size >= this.#track) this.#seen.clear();
      this.#seen.set(text, seen);
      return undefined;
    }
    this.#seen.delete(text);
    return this.#rename(text);
  }

  /** A fresh name for `text` (its prepared plans went stale); it keeps its place in the budget. */
  #rename(text: string): string {
    const name = `cw_${this.#next++}`;
    this.#named.set(text, name);
    return name;
  }

  renameStale(text: string, name: string): string {
    // Several connections may report the same stale name: rename once.
    const current = this.#named.get(text);
    return current === name ? this.#rename(text) : (current ?? this.#rename(text));
  }

  get size(): number {
    return this.#named.size;
  }
}

type Query = (...args: unknown[]) => Promise<unknown>;

/**
 * Makes `client` send parameterized queries given as `(text, values)` — how Kysely calls it —
 * as named statements per `names`. Other calls (query objects, cursors, simple queries without
 * parameters such as `begin`) go through unchanged.
 */
export function prepareStatements(client: pg.PoolClient, names: StatementNames): void {
  const query = client.query.bind(client) as unknown as Query;
  const named = async (name: string, text: string, values: unknown[]): Promise<unknown> => {
    try {
      return await query({ name, text, values });
    } catch (error) {
      if (!STALE_PLAN.test((error as Error | null)?.message ?? '')) throw error;
      const fresh = names.renameStale(text, name);
      const status = (client as { getTransactionStatus?: () => string | null }).getTransactionStatus?.();
      if (status !== 'I') throw error;
      return query({ name: fresh, text, values });
    }
  };
  (client as unknown as { query: Query }).query = (...args: unknown[]) => {
    const [text, values] = args;
    if (args.length === 2 && typeof text === 'string' && Array.isArray(values) && values.length > 0) {
      const name = names.nameOf(text);
      if (name !== undefined) return named(name, text, values);
    }
    return query(...args);
  };
}
