import { TemplateError } from './errors.js';
import { sprintf } from './printf.js';
import {
  compareStrings,
  formatValue,
  goType,
  isTrue,
  kindOf,
  MISSING,
  normalize,
  type Value,
} from './values.js';

/**
 * The functions a template may call. Go's builtins (`and or not len index print printf println
 * eq ne lt le gt ge urlquery`) keep Go's semantics; `title upper lower urlpath json` are
 * certwright's additions (docs/notifications/templates.md).
 */
export const FUNCTION_NAMES: ReadonlySet<string> = new Set([
  'and',
  'or',
  'not',
  'len',
  'index',
  'print',
  'printf',
  'println',
  'eq',
  'ne',
  'lt',
  'le',
  'gt',
  'ge',
  'urlquery',
  'urlpath',
  'title',
  'upper',
  'lower',
  'json',
]);

export type TemplateFunction = (args: Value[], pos: number) => Value;

const fail = (name: string, message: string, pos: number): TemplateError =>
  new TemplateError(`error calling ${name}: ${message}`, pos);

function arity(name: string, args: Value[], pos: number, want: number, atLeast = false): void {
  if (atLeast ? args.length < want : args.length !== want) {
    throw new TemplateError(
      `wrong number of args for ${name}: want ${atLeast ? 'at least ' : ''}${want} got ${args.length}`,
      pos,
    );
  }
}

/** A string parameter, as Go's reflection checks it. */
function stringArg(value: Value, pos: number): string {
  if (value === MISSING) throw new TemplateError('invalid value; expected string', pos);
  const v = normalize(value);
  if (typeof v !== 'string')
    throw new TemplateError(`wrong type for value; expected string; got ${goType(v)}`, pos);
  return v;
}

/** An interface parameter: a missing value arrives as nil. */
const anyArg = (value: Value): Value => (value === MISSING ? null : normalize(value));

/** `fmt.Sprint`: spaces between operands when neither is a string. */
export function sprint(args: readonly Value[]): string {
  let out = '';
  args.forEach((arg, i) => {
    const isString = typeof arg === 'string';
    if (i > 0 && !isString && typeof args[i - 1] !== 'string') out += ' ';
    out += formatValue(arg);
  });
  return out;
}

/** Go's `evalArgs`: one string argument as it is, anything else through `fmt.Sprint`. */
const evalArgs = (args: Value[]): string =>
  args.length === 1 && typeof args[0] === 'string' ? args[0] : sprint(args.map(anyArg));

/** Percent-encodes UTF-8 bytes except the characters `keep` allows (upper-case hex, as Go). */
function percentEncode(s: string, keep: (c: string) => boolean, spaceAsPlus: boolean): string {
  let out = '';
  for (const ch of s) {
    if (ch.length === 1 && /[A-Za-z0-9]/.test(ch)) out += ch;
    else if (ch === ' ' && spaceAsPlus) out += '+';
    else if (ch.length === 1 && keep(ch)) out += ch;
    else for (const b of Buffer.from(ch, 'utf8')) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Go's `url.QueryEscape`: a query parameter name or value. */
export const queryEscape = (s: string): string => percentEncode(s, (c) => '-_.~'.includes(c), true);

/** Go's `url.PathEscape`: one path segment (`/`, `;`, `,` and `?` are encoded). */
export const pathEscape = (s: string): string => percentEncode(s, (c) => '-_.~$&+:=@'.includes(c), false);

type Basic = 'bool' | 'number' | 'string' | 'nil';

function basicKind(value: Value): Basic | undefined {
  switch (kindOf(value)) {
    case 'bool':
      return 'bool';
    case 'int':
    case 'float':
      return 'number';
    case 'string':
      return 'string';
    case 'nil':
    case 'missing':
      return 'nil';
    default:
      return undefined;
  }
}

/**
 * Go's `eq` for one pair. Integers and floats compare by value (Go refuses int against float;
 * JavaScript cannot tell them apart reliably).
 */
function equal(a: Value, b: Value, pos: number): boolean {
  const ka = basicKind(a);
  const kb = basicKind(b);
  if (ka === 'nil' || kb === 'nil') return ka === kb;
  if (ka === undefined || kb === undefined) {
    throw fail('eq', `non-comparable type ${goType(ka === undefined ? a : b)}`, pos);
  }
  if (ka !== kb) throw fail('eq', 'incompatible types for comparison', pos);
  return a === b;
}

function less(name: string, a: Value, b: Value, pos: number): boolean {
  const ka = basicKind(a);
  const kb = basicKind(b);
  if (
    ka === undefined ||
    kb === undefined ||
    ka === 'bool' ||
    kb === 'bool' ||
    ka === 'nil' ||
    kb === 'nil'
  ) {
    throw fail(name, 'invalid type for comparison', pos);
  }
  if (ka !== kb) throw fail(name, 'incompatible types for comparison', pos);
  return ka === 'string' ? compareStrings(a as string, b as string) < 0 : (a as number) < (b as number);
}

/** strings.Title's separators: not an ASCII letter, digit or `_`, and not a Unicode letter or digit. */
const isSeparator = (ch: string): boolean =>
  ch.length === 1 && ch.charCodeAt(0) < 0x80
    ? !/[A-Za-z0-9_]/.test(ch)
    : !/[\p{L}\p{Nd}]/u.test(ch) && /\s/u.test(ch);

/** Title case differs from upper case for the Latin digraphs (U+01C4–U+01CC, U+01F1–U+01F3). */
const TITLE_CASE: Record<string, string> = {
  Ǆ: 'ǅ',
  ǅ: 'ǅ',
  ǆ: 'ǅ',
  Ǉ: 'ǈ',
  ǈ: 'ǈ',
  ǉ: 'ǈ',
  Ǌ: 'ǋ',
  ǋ: 'ǋ',
  ǌ: 'ǋ',
  Ǳ: 'ǲ',
  ǲ: 'ǲ',
  ǳ: 'ǲ',
};

/** Go maps case one character at a time (simple case mapping): `ß` stays `ß` in upper case. */
function mapCase(ch: string, upper: boolean): string {
  if (!upper && ch === 'İ') return 'i';
  const mapped = upper ? ch.toUpperCase() : ch.toLowerCase();
  return [...mapped].length === 1 ? mapped : ch;
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

function changeCase(s: string, upper: boolean): string {
  if (isAscii(s)) return upper ? s.toUpperCase() : s.toLowerCase();
  let out = '';
  for (const ch of s) out += mapCase(ch, upper);
  return out;
}

function title(s: string): string {
  let prev = ' ';
  let out = '';
  for (const ch of s) {
    out += isSeparator(prev) ? (TITLE_CASE[ch] ?? mapCase(ch, true)) : ch;
    prev = ch;
  }
  return out;
}

/** JSON text of a value; U+2028 and U+2029 escaped so the text is safe inside JavaScript too. */
function toJson(value: Value, pos: number): string {
  const text = JSON.stringify(jsonValue(value, pos, 0));
  return /[\u2028\u2029]/.test(text)
    ? text.replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029')
    : text;
}

/** The value JSON.stringify should see; nesting is bounded, which also refuses cycles. */
function jsonValue(value: Value, pos: number, depth: number): Value {
  const v = normalize(value === MISSING ? null : value);
  if (typeof v === 'number' && !Number.isFinite(v)) throw fail('json', `${v} has no JSON form`, pos);
  if (v === undefined) return null;
  if (typeof v !== 'object' || v === null) return v;
  if (depth >= 64) throw fail('json', 'the value is nested too deeply (or contains a cycle)', pos);
  if (Array.isArray(v)) return v.map((x) => jsonValue(x, pos, depth + 1));
  const out: Record<string, Value> = {};
  for (const [k, x] of Object.entries(v as Record<string, Value>)) out[k] = jsonValue(x, pos, depth + 1);
  return out;
}

function index(args: Value[], pos: number): Value {
  let item = anyArg(args[0]);
  if (item === null) throw fail('index', 'index of untyped nil', pos);
  for (const raw of args.slice(1)) {
    const key = anyArg(raw);
    const kind = kindOf(item);
    if (kind === 'nil') throw fail('index', 'index of nil pointer', pos);
    if (kind === 'array' || kind === 'string') {
      if (kindOf(key) !== 'int') {
        throw fail(
          'index',
          key === null
            ? 'cannot index slice/array with nil'
            : `cannot index slice/array with type ${goType(key)}`,
          pos,
        );
      }
      const bytes = kind === 'string' ? Buffer.from(item as string, 'utf8') : undefined;
      const length = bytes ? bytes.length : (item as Value[]).length;
      const i = key as number;
      if (i < 0 || i >= length) throw fail('index', `index out of range: ${i}`, pos);
      item = bytes ? bytes[i]! : normalize((item as Value[])[i]);
    } else if (kind === 'map') {
      if (typeof key !== 'string')
        throw fail('index', `value has type ${goType(key)}; should be string`, pos);
      const found = Object.hasOwn(item as object, key) ? (item as Record<string, Value>)[key] : undefined;
      item = found === undefined ? null : normalize(found);
    } else {
      throw fail('index', `can't index item of type ${goType(item)}`, pos);
    }
  }
  return item;
}

function length(value: Value, pos: number): number {
  const v = anyArg(value);
  switch (kindOf(v)) {
    case 'string':
      return Buffer.byteLength(v as string, 'utf8');
    case 'array':
      return (v as Value[]).length;
    case 'map':
      return Object.keys(v as object).length;
    case 'nil':
      throw fail('len', 'len of untyped nil', pos);
    default:
      throw fail('len', `len of type ${goType(v)}`, pos);
  }
}

/** Every function except `and` and `or`, which the executor evaluates lazily. */
export const FUNCTIONS: Readonly<Record<string, TemplateFunction>> = {
  not: (args, pos) => {
    arity('not', args, pos, 1);
    return !isTrue(args[0]);
  },
  len: (args, pos) => {
    arity('len', args, pos, 1);
    return length(args[0], pos);
  },
  index: (args, pos) => {
    arity('index', args, pos, 1, true);
    return index(args, pos);
  },
  print: (args) => sprint(args.map(anyArg)),
  println: (args) => `${args.map((a) => formatValue(anyArg(a))).join(' ')}\n`,
  printf: (args, pos) => {
    arity('printf', args, pos, 1, true);
    return sprintf(stringArg(args[0], pos), args.slice(1).map(anyArg), pos);
  },
  eq: (args, pos) => {
    arity('eq', args, pos, 2, true);
    const [first, ...rest] = args.map(anyArg);
    return rest.some((other) => equal(first, other, pos));
  },
  ne: (args, pos) => {
    arity('ne', args, pos, 2);
    return !equal(anyArg(args[0]), anyArg(args[1]), pos);
  },
  lt: (args, pos) => {
    arity('lt', args, pos, 2);
    return less('lt', anyArg(args[0]), anyArg(args[1]), pos);
  },
  le: (args, pos) => {
    arity('le', args, pos, 2);
    const [a, b] = [anyArg(args[0]), anyArg(args[1])];
    return less('le', a, b, pos) || equal(a, b, pos);
  },
  gt: (args, pos) => {
    arity('gt', args, pos, 2);
    const [a, b] = [anyArg(args[0]), anyArg(args[1])];
    return !(less('gt', a, b, pos) || equal(a, b, pos));
  },
  ge: (args, pos) => {
    arity('ge', args, pos, 2);
    return !less('ge', anyArg(args[0]), anyArg(args[1]), pos);
  },
  urlquery: (args) => queryEscape(evalArgs(args)),
  urlpath: (args) => pathEscape(evalArgs(args)),
  title: (args, pos) => {
    arity('title', args, pos, 1);
    return title(stringArg(args[0], pos));
  },
  upper: (args, pos) => {
    arity('upper', args, pos, 1);
    return changeCase(stringArg(args[0], pos), true);
  },
  lower: (args, pos) => {
    arity('lower', args, pos, 1);
    return changeCase(stringArg(args[0], pos), false);
  },
  json: (args, pos) => {
    arity('json', args, pos, 1);
    return toJson(args[0], pos);
  },
};
