import { stringify } from 'yaml';
import { UsageError } from './exit-codes.js';
import { compileTemplate } from './template.js';

export const FORMATS = ['table', 'json', 'yaml', 'jsonpath=…', 'template=…'] as const;

export type Format =
  | { kind: 'table' | 'json' | 'yaml' }
  | { kind: 'template'; render: (value: unknown) => string };

/** The columns a table shows first, in this order, when `--columns` does not choose. */
const FIRST = [
  'id',
  'name',
  'common_name',
  'status',
  'type',
  'severity',
  'enabled',
  'agent_id',
  'owner_id',
  'team_id',
  'expires_at',
  'created_at',
];
const MAX_COLUMNS = 8;
const MAX_CELL = 48;

export function parseFormat(value: string | undefined): Format {
  const text = value ?? 'table';
  if (text === 'table' || text === 'json' || text === 'yaml') return { kind: text };
  for (const syntax of ['jsonpath', 'template'] as const) {
    if (text.startsWith(`${syntax}=`)) {
      return { kind: 'template', render: compileTemplate(text.slice(syntax.length + 1), syntax) };
    }
  }
  throw new UsageError(`--output must be one of ${FORMATS.join(', ')} (got ${JSON.stringify(value)})`);
}

/**
 * The names of referenced records, by reference field and id (`owner_id` → `own-1` → `Web`):
 * tables show them in place of the ids.
 */
export type Names = Map<string, Map<string, string>>;

export interface TableOptions {
  /** Fields to show, in order (`--columns`); a reference field may be named without `_id`. */
  columns?: string[];
  names?: Names;
}

/** A JSON answer as text in the chosen format; tables for people, the others for scripts. */
export function render(value: unknown, format: Format, options: TableOptions = {}): string {
  if (value === undefined) return '';
  if (format.kind === 'json') return `${JSON.stringify(value, null, 2)}\n`;
  if (format.kind === 'yaml') return stringify(value);
  if (format.kind === 'template') return format.render(value);
  if (Array.isArray(value)) return table(value, options);
  if (isPage(value)) {
    const shown = value.data.length === 0 ? '' : table(value.data, options);
    const last = Math.max(1, Math.ceil(value.total / value.per_page));
    // The certificate list estimates totals above 1,000 matches (docs/api/inventory.md).
    const about = (value as { total_estimated?: unknown }).total_estimated === true ? 'about ' : '';
    return `${shown}${shown ? '\n' : ''}page ${value.page} of ${about}${last} · ${about}${value.total} total\n`;
  }
  if (value !== null && typeof value === 'object')
    return keyValues(value as Record<string, unknown>, options);
  return `${String(value)}\n`;
}

interface Page {
  data: unknown[];
  total: number;
  page: number;
  per_page: number;
}

export const isPage = (v: unknown): v is Page =>
  v !== null &&
  typeof v === 'object' &&
  Array.isArray((v as Page).data) &&
  typeof (v as Page).total === 'number';

/** The rows a table of this answer shows: a list, a page's data, or one record. */
export function rowsOf(value: unknown): Record<string, unknown>[] {
  const rows = Array.isArray(value) ? value : isPage(value) ? value.data : [value];
  return rows.filter((r): r is Record<string, unknown> => r !== null && typeof r === 'object');
}

/** The columns a table of this answer shows (a single record shows every field). */
export function shownColumns(value: unknown, chosen: string[] | undefined): string[] {
  const rows = rowsOf(value);
  if (!Array.isArray(value) && !isPage(value))
    return chosen ? chooseColumns(rows, chosen) : Object.keys(rows[0] ?? {});
  return chooseColumns(rows, chosen);
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  const line = text.replace(/\s+/g, ' ');
  return line.length > MAX_CELL ? `${line.slice(0, MAX_CELL - 1)}…` : line;
}

/** A field of a row by its column name: `owner` reads `owner_id`, `metadata.env` reads into an object. */
function field(row: Record<string, unknown>, column: string): unknown {
  if (Object.hasOwn(row, column)) return row[column];
  if (Object.hasOwn(row, `${column}_id`)) return row[`${column}_id`];
  let current: unknown = row;
  for (const part of column.split('.')) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, part)) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

const referenceOf = (row: Record<string, unknown>, column: string) =>
  Object.hasOwn(row, column) ? column : Object.hasOwn(row, `${column}_id`) ? `${column}_id` : column;

/** A reference column is titled for what it names (OWNER), an id column for what it holds. */
function title(column: string, names: Names | undefined): string {
  const name = names?.has(column) ? column.replace(/_id$/, '') : column;
  return name.toUpperCase();
}

function chooseColumns(objects: Record<string, unknown>[], chosen: string[] | undefined): string[] {
  if (chosen) {
    const known = new Set(objects.flatMap((o) => Object.keys(o)));
    for (const column of chosen) {
      if (objects.length > 0 && !objects.some((o) => field(o, column) !== undefined)) {
        throw new UsageError(
          `--columns: no field ${JSON.stringify(column)} in this answer (fields: ${[...known].join(', ')})`,
        );
      }
    }
    return chosen.map((c) => (objects[0] ? referenceOf(objects[0], c) : c));
  }
  const keys = [...new Set(objects.flatMap((o) => Object.keys(o)))].filter((k) =>
    objects.some((o) => o[k] === null || typeof o[k] !== 'object'),
  );
  return [...FIRST.filter((k) => keys.includes(k)), ...keys.filter((k) => !FIRST.includes(k))].slice(
    0,
    MAX_COLUMNS,
  );
}

function display(column: string, value: unknown, names: Names | undefined): string {
  const name = typeof value === 'string' ? names?.get(column)?.get(value) : undefined;
  return cell(name ?? value);
}

function table(rows: unknown[], options: TableOptions): string {
  if (rows.length === 0) return '(none)\n';
  const objects = rows.map((r) =>
    r !== null && typeof r === 'object' ? (r as Record<string, unknown>) : { value: r },
  );
  const columns = chooseColumns(objects, options.columns);
  const grid = [
    columns.map((c) => title(c, options.names)),
    ...objects.map((o) => columns.map((c) => display(c, field(o, c), options.names))),
  ];
  const widths = columns.map((_, i) => Math.max(...grid.map((row) => (row[i] as string).length)));
  return `${grid
    .map((row) =>
      row
        .map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i] as number)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}

function keyValues(object: Record<string, unknown>, options: TableOptions): string {
  const keys = options.columns ? chooseColumns([object], options.columns) : Object.keys(object);
  const width = Math.max(0, ...keys.map((k) => k.length));
  return keys
    .map((k) => {
      const v = field(object, k);
      const name = typeof v === 'string' ? options.names?.get(k)?.get(v) : undefined;
      const text =
        v !== null && typeof v === 'object'
          ? JSON.stringify(v)
          : v === null || v === undefined
            ? ''
            : name
              ? `${name} (${v})`
              : String(v);
      return `${k.padEnd(width)}  ${text}`;
    })
    .join('\n')
    .concat('\n');
}
