import { type CreateTableBuilder, type Kysely, type RawBuilder, sql } from 'kysely';
import type { Flavor } from '../schema.js';

export interface Migration {
  /** Strictly increasing; never renumber a released migration. */
  version: number;
  name: string;
  // biome-ignore lint/suspicious/noExplicitAny: migrations address tables that the typed schema may not describe yet
  up(db: Kysely<any>, types: ColumnTypes): Promise<void>;
}

/** Column types that differ between the two SQL families. */
export interface ColumnTypes {
  flavor: Flavor;
  /** Millisecond timestamps: timestamptz(3) on PostgreSQL, datetime(3) in UTC on MySQL. */
  ts: RawBuilder<unknown>;
  /** Unbounded text: text on PostgreSQL, mediumtext (16 MB) on MySQL where text is only 64 KB. */
  text: RawBuilder<unknown>;
  bool: RawBuilder<unknown>;
  bigint: RawBuilder<unknown>;
  /**
   * Table options: on MySQL InnoDB, utf8mb4 and a binary collation, so uniqueness and equality
   * are case-sensitive exactly as on PostgreSQL whatever the server's default collation is.
   */
  table<B extends CreateTableBuilder<string, string>>(builder: B): B;
}

export function columnTypes(flavor: Flavor): ColumnTypes {
  return flavor === 'mysql'
    ? {
        flavor,
        ts: sql`datetime(3)`,
        text: sql`mediumtext`,
        bool: sql`boolean`,
        bigint: sql`bigint`,
        table: (b) => b.modifyEnd(sql`engine=InnoDB default charset=utf8mb4 collate=utf8mb4_bin`) as typeof b,
      }
    : {
        flavor,
        ts: sql`timestamptz(3)`,
        text: sql`text`,
        bool: sql`boolean`,
        bigint: sql`bigint`,
        table: (b) => b,
      };
}
