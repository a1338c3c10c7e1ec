import { formatFloat } from './go-float.js';

/**
 * Template data are JSON-like JavaScript values, read the way Go's text/template reads
 * `map[string]any` data: objects are maps (sorted keys when ranged or printed), arrays are
 * slices, `null` is nil. A number holding an integral value is an `int`, any other number a
 * `float64` (JavaScript has one number type; docs/notifications/templates.md says what follows).
 * `Date` values read as their RFC 3339 text.
 */
export type Value = unknown;

/** A map key that is not there (Go's "no value"); printed as `<no value>`. */
export const MISSING: unique symbol = Symbol('no value');

export type Kind = 'nil' | 'missing' | 'bool' | 'int' | 'float' | 'string' | 'array' | 'map' | 'other';

export function kindOf(value: Value): Kind {
  if (value === null || value === undefined) return 'nil';
  if (value === MISSING) return 'missing';
  switch (typeof value) {
    case 'boolean':
      return 'bool';
    case 'number':
      return Number.isInteger(value) ? 'int' : 'float';
    case 'bigint':
      return 'int';
    case 'string':
      return 'string';
    case 'object':
      return Array.isArray(value) ? 'array' : value instanceof Date ? 'string' : 'map';
    default:
      return 'other';
  }
}

/** Converts the few non-JSON values data may hold to what the engine reads. */
export function normalize(value: Value): Value {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? '' : value.toISOString();
  if (typeof value === 'bigint') return Number(value);
  return value;
}

/** Go's type names, for `%!d(string=…)`-style messages. */
export function goType(value: Value): string {
  switch (kindOf(value)) {
    case 'bool':
      return 'bool';
    case 'int':
      return 'int';
    case 'float':
      return 'float64';
    case 'string':
      return 'string';
    case 'array':
      return '[]interface {}';
    case 'map':
      return 'map[string]interface {}';
    case 'nil':
    case 'missing':
      return '<nil>';
    default:
      return typeof value;
  }
}

/** Go's truth: false, 0, nil, "" and empty slices and maps are false. */
export function isTrue(value: Value): boolean {
  const v = normalize(value);
  switch (kindOf(v)) {
    case 'nil':
    case 'missing':
      return false;
    case 'bool':
      return v as boolean;
    case 'int':
    case 'float':
      return v !== 0;
    case 'string':
      return (v as string).length > 0;
    case 'array':
      return (v as unknown[]).length > 0;
    case 'map':
      return Object.keys(v as object).length > 0;
    default:
      return true;
  }
}

/** Byte-wise (UTF-8, that is code point) order, as Go compares strings. */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate (astral code point) sorts above every BMP character in UTF-8.
    const sx = x >= 0xd800 && x <= 0xdfff ? x + 0x10000 : x;
    const sy = y >= 0xd800 && y <= 0xdfff ? y + 0x10000 : y;
    return sx < sy ? -1 : 1;
  }
  return a.length - b.length;
}

export const sortedKeys = (map: object): string[] => Object.keys(map).sort(compareStrings);

/** Every digit of an integral value (no exponent form, unlike String(1e21)). */
export function formatInt(value: number): string {
  return Number.isSafeInteger(value) ? String(value) : BigInt(value).toString();
}

/** Go's `%v` (what `{{.X}}`, `print` and `%v` show). */
export function formatValue(value: Value): string {
  const v = normalize(value);
  switch (kindOf(v)) {
    case 'nil':
      return '<nil>';
    case 'missing':
      return '<no value>';
    case 'bool':
      return v ? 'true' : 'false';
    case 'int':
      return formatInt(v as number);
    case 'float':
      return formatFloat(v as number, 'g', -1);
    case 'string':
      return v as string;
    case 'array':
      return `[${(v as Value[]).map(formatValue).join(' ')}]`;
    case 'map': {
      const map = v as Record<string, Value>;
      return `map[${sortedKeys(map)
        .map((k) => `${k}:${formatValue(map[k])}`)
        .join(' ')}]`;
    }
    default:
      return String(v);
  }
}
