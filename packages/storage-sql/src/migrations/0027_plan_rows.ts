import { sql } from 'kysely';
import type { Migration } from './types.js';

/**
 * PostgreSQL and PGlite: `cw_plan_rows(query)`, the planner's row estimate of a query, callable
 * inside another statement (docs/storage/README.md, "Inventory at scale").
 *
 * A list page over more matches than it counts exactly reports the planner's estimate, which
 * only EXPLAIN gives — until now a statement of its own after the page and its capped count.
 * On PGlite every statement costs about a millisecond of WASM before it reads a row, and its one
 * connection runs them one after another; with the estimate taken by a function, the page, its
 * capped count and the estimate are one statement. The function only plans `query` (EXPLAIN
 * without ANALYZE); it is volatile because a non-volatile function may not run EXPLAIN.
 * MySQL/MariaDB cannot read EXPLAIN's output inside a statement and keep their own.
 */
export const planRows: Migration = {
  version: 27,
  name: 'plan_rows',
  async up(db, t) {
    if (t.flavor !== 'postgres') return;
    // The first line of the text plan is the top node, `… (cost=… rows=N width=…)`: cheaper to
    // produce and read than the JSON plan (about 0.3 ms a call on PGlite).
    await sql`create or replace function cw_plan_rows(query text) returns bigint
      language plpgsql volatile as $$
      declare top text;
      begin
        execute 'explain ' || query into top;
        return substring(top from ' rows=([0-9]+) ')::bigint;
      end
      $$`.execute(db);
  },
};
