import { stringify } from 'yaml';
import { UsageError } from './exit-codes.js';

export const FORMATS = ['table', 'json', 'yaml'] as const;
export type Format = (typeof FORMATS)[number];

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
  'expires_at',
  'created_at',
];
const MAX_COLUMNS = 7;
const MAX_CELL = 48;

export function parseFormat(value: string | undefined): Format {
  const format = (value ?? 'table') as Format;
  if (!FORMATS.includes(format))
    throw new UsageError(`--output must be one of ${FORMATS.join(', ')} (got ${JSON.stringify(value)})`);
  return format;
}

/** A JSON answer as text in the chosen format; tables for people, json and yaml for scripts. */
export function render(value: unknown, format: Format): string {
  if (value === undefined) return '';
  if (format === 'json') return `${JSON.stringify(value, null, 2)}\n`;
  if (format === 'yaml') return stringify(value);
  if (Array.isArray(value)) return table(value);
  if (isPage(value)) {
    const shown = value.data.length === 0 ? '' : table(value.data);
    const last = Math.max(1, Math.ceil(value.total / value.per_page));
    // The certificate list estimates totals above 1,000 matches (docs/api/inventory.md).
    const about = (value as { total_estimated?: unknown }).total_estimated === true ? 'about ' : '';
    return `${shown}${shown ? '\n' : ''}page ${value.page} of ${about}${last} · ${about}${value.total} total\n`;
  }
  if (value !== null && typeof value === 'object') return keyValues(value as Record<string, unknown>);
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

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  const line = text.replace(/\s+/g, ' ');
  return line.length > MAX_CELL ? `${line.slice(0, MAX_CELL - 1)}…` : line;
}

function table(rows: unknown[]): string {
  if (rows.length === 0) return '(none)\n';
  const objects = rows.map((r) =>
    r !== null && typeof r === 'object' ? (r as Record<string, unknown>) : { value: r },
  );
  const keys = [...new Set(objects.flatMap((o) => Object.keys(o)))].filter((k) =>
    objects.some((o) => o[k] === null || typeof o[k] !== 'object'),
  );
  const columns = [...FIRST.filter((k) => keys.includes(k)), ...keys.filter((k) => !FIRST.includes(k))].slice(
    0,
    MAX_COLUMNS,
  );
  const grid = [columns.map((c) => c.toUpperCase()), ...objects.map((o) => columns.map((c) => cell(o[c])))];
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

function keyValues(object: Record<string, unknown>): string {
  const keys = Object.keys(object);
  const width = Math.max(0, ...keys.map((k) => k.length));
  return keys
    .map((k) => {
      const v = object[k];
      const text =
        v !== null && typeof v === 'object'
          ? JSON.stringify(v)
          : v === null || v === undefined
            ? ''
            : String(v);
      return `${k.padEnd(width)}  ${text}`;
    })
    .join('\n')
    .concat('\n');
}
