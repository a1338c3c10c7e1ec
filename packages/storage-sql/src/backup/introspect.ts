import { type Kysely, sql } from 'kysely';
import type { Database, Flavor } from '../schema.js';

/** How a backup carries a column's values, whatever engine wrote or reads them. */
export type ColumnKind = 'text' | 'int' | 'float' | 'bool' | 'ts' | 'bytes';

export interface TableShape {
  name: string;
  columns: { name: string; kind: ColumnKind }[];
  /** Primary key columns in key order: the order a backup reads the table in. */
  key: string[];
  /** Tables this one references by foreign key (restored before it). */
  references: string[];
}

/**
 * The tables of the connected database as the engine describes them (information_schema), so a
 * backup holds every table, including ones added by later migrations, without a list to keep.
 */
export async function describeTables(db: Kysely<Database>, flavor: Flavor): Promise<TableShape[]> {
  const schema = flavor === 'mysql' ? sql`database()` : sql`current_schema()`;
  const columns = await sql<{ t: string; c: string; data_type: string; column_type: string }>`
    select table_name as t, column_name as c, data_type as data_type,
      ${flavor === 'mysql' ? sql`column_type` : sql`data_type`} as column_type
    from information_schema.columns
    where table_schema = ${schema}
      and table_name in (select table_name from information_schema.tables where table_schema = ${schema} and table_type = 'BASE TABLE')
    order by table_name, ordinal_position`.execute(db);
  const keys = await sql<{ t: string; c: string }>`
    select k.table_name as t, k.column_name as c
    from information_schema.table_constraints tc
    join information_schema.key_column_usage k
      on k.constraint_name = tc.constraint_name and k.table_name = tc.table_name and k.table_schema = tc.table_schema
    where tc.table_schema = ${schema} and tc.constraint_type = 'PRIMARY KEY'
    order by k.table_name, k.ordinal_position`.execute(db);
  const references =
    flavor === 'mysql'
      ? await sql<{ t: string; r: string }>`
          select table_name as t, referenced_table_name as r from information_schema.referential_constraints
          where constraint_schema = ${schema}`.execute(db)
      : await sql<{ t: string; r: string }>`
          select tc.table_name as t, ccu.table_name as r
          from information_schema.table_constraints tc
          join information_schema.constraint_column_usage ccu
            on ccu.constraint_name = tc.constraint_name and ccu.constraint_schema = tc.constraint_schema
          where tc.table_schema = ${schema} and tc.constraint_type = 'FOREIGN KEY'`.execute(db);
  const tables = new Map<string, TableShape>();
  for (const row of columns.rows) {
    let table = tables.get(row.t);
    if (!table) {
      table = { name: row.t, columns: [], key: [], references: [] };
      tables.set(row.t, table);
    }
    table.columns.push({ name: row.c, kind: kindOf(flavor, row.data_type, row.column_type) });
  }
  for (const row of keys.rows) tables.get(row.t)?.key.push(row.c);
  for (const row of references.rows) {
    const table = tables.get(row.t);
    if (table && row.r !== row.t && !table.references.includes(row.r)) table.references.push(row.r);
  }
  return orderByReferences([...tables.values()]);
}

function kindOf(flavor: Flavor, dataType: string, columnType: string): ColumnKind {
  const type = dataType.toLowerCase();
  if (type.startsWith('timestamp') || type === 'datetime') return 'ts';
  if (type === 'bytea' || type.endsWith('blob') || type === 'varbinary' || type === 'binary') return 'bytes';
  if (type === 'boolean' || (flavor === 'mysql' && columnType.toLowerCase().startsWith('tinyint(1)')))
    return 'bool';
  if (['integer', 'int', 'bigint', 'smallint', 'tinyint', 'mediumint'].includes(type)) return 'int';
  if (['double precision', 'double', 'real', 'float', 'numeric', 'decimal'].includes(type)) return 'float';
  return 'text';
}

/** Parents before children (a foreign key's target first), by name within a rank: stable. */
function orderByReferences(tables: TableShape[]): TableShape[] {
  const byName = new Map(tables.map((t) => [t.name, t]));
  const done = new Set<string>();
  const out: TableShape[] = [];
  const visit = (table: TableShape, path: Set<string>) => {
    if (done.has(table.name)) return;
    if (path.has(table.name)) throw new Error(`foreign keys form a cycle through ${table.name}`);
    path.add(table.name);
    for (const name of [...table.references].sort()) {
      const parent = byName.get(name);
      if (parent) visit(parent, path);
    }
    path.delete(table.name);
    done.add(table.name);
    out.push(table);
  };
  for (const table of [...tables].sort((a, b) => (a.name < b.name ? -1 : 1))) visit(table, new Set());
  return out;
}
