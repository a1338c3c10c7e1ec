import { readFileSync } from 'node:fs';
import type { OperationSpec } from '@certwright/client';
import { UsageError } from './exit-codes.js';
import { type Direction, parseAmount, parseInstant } from './times.js';

type Schema = {
  type?: string | string[];
  format?: string;
  const?: unknown;
  enum?: unknown[];
  anyOf?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  description?: string;
};

/** Help for flags whose schema says nothing, where a reader needs the why. */
const HELP: Record<string, string> = {
  force: 'go ahead despite active dependencies (targets, certificates, pending jobs); requires --reason',
  reason: 'why, recorded in the audit trail',
  page: 'page number, from 1',
  per_page: 'items per page',
};

export type ValueKind =
  | 'string'
  | 'number'
  | 'boolean'
  | 'list'
  | 'json'
  /** A date-time: RFC 3339, `now`, or a duration from now (times.ts). */
  | 'instant'
  /** An integer count of seconds or days: a number, or a duration (`5m`, `30d`). */
  | 'seconds'
  | 'days'
  /** A write-only secret: read from `--<flag>-file <path|->`, never taken on the command line. */
  | 'secret-file';

/** Write-only secrets of request bodies: a value on the command line is visible to every local user. */
const SECRET_FIELDS = new Set(['password', 'client_secret']);

/** One flag of a command: a query parameter or a top-level body field. */
export interface FlagSpec {
  /** The wire name (`common_name`). */
  name: string;
  /** The flag (`common-name`). */
  flag: string;
  where: 'query' | 'body';
  kind: ValueKind;
  required: boolean;
  choices?: string[];
  /** Which way a bare duration points, for an instant. */
  direction?: Direction;
  /** The one value the schema allows (`format: pkcs12`): sent without a flag. */
  fixed?: unknown;
  description: string;
}

/** Flags every command may have; a field with one of these names is reached through --body. */
export const RESERVED = new Set([
  'output',
  'server',
  'config',
  'help',
  'version',
  'body',
  'body-file',
  'all',
  'out',
  'wait',
  'batch-size',
  'api-key-file',
  'ca-bundle',
  'insecure-skip-verify',
  'quiet',
]);

function kindOf(
  name: string,
  schema: Schema,
  where: 'query' | 'body',
): { kind: ValueKind; choices?: string[] } {
  const variants = (schema.anyOf ?? [schema]).filter((s) => s.type !== 'null');
  const types = new Set(variants.flatMap((s) => [s.type ?? 'any'].flat()));
  if (where === 'body' && SECRET_FIELDS.has(name)) return { kind: 'secret-file' };
  if (variants.some((s) => s.format === 'date-time')) return { kind: 'instant' };
  if (types.has('boolean')) return { kind: 'boolean' };
  if (types.size === 1 && types.has('integer') && name.endsWith('_seconds')) return { kind: 'seconds' };
  if (types.size === 1 && types.has('integer') && name.endsWith('_days')) return { kind: 'days' };
  if (types.size === 1 && (types.has('integer') || types.has('number'))) return { kind: 'number' };
  if (types.size === 1 && types.has('array')) {
    const itemType = variants[0]?.items?.type;
    return itemType === 'string' || itemType === undefined ? { kind: 'list' } : { kind: 'json' };
  }
  if (types.size === 1 && types.has('string')) {
    const choices = variants[0]?.enum?.filter((v): v is string => typeof v === 'string' && v !== '');
    return choices?.length ? { kind: 'string', choices } : { kind: 'string' };
  }
  return { kind: 'json' };
}

export function flagsOf(op: OperationSpec): FlagSpec[] {
  const flags: FlagSpec[] = [];
  const add = (name: string, schema: Schema, where: 'query' | 'body', required: boolean) => {
    const { kind, choices } = kindOf(name, schema, where);
    const flag = `${name.replace(/_/g, '-')}${kind === 'secret-file' ? '-file' : ''}`;
    if (RESERVED.has(flag) || flags.some((f) => f.flag === flag)) return;
    const listChoices =
      kind === 'list' ? schema.items?.enum?.filter((v): v is string => typeof v === 'string') : undefined;
    const direction: Direction = name.startsWith('expires') ? 'future' : 'past';
    flags.push({
      name,
      flag,
      where,
      kind,
      required: required && schema.const === undefined,
      ...(choices ? { choices } : {}),
      ...(kind === 'instant' ? { direction } : {}),
      ...(schema.const !== undefined ? { fixed: schema.const } : {}),
      description: [
        schema.description ?? HELP[name] ?? `${where === 'query' ? 'filter' : 'field'} ${name}`,
        listChoices?.length ? `one or more of ${listChoices.join(', ')}` : undefined,
        kind === 'list' ? 'comma-separated or repeated' : undefined,
        kind === 'json' ? 'JSON' : undefined,
        kind === 'instant'
          ? `RFC 3339, now, or a duration ${direction === 'future' ? 'from now (30d, +12h)' : 'ago (7d, -12h)'}`
          : undefined,
        kind === 'seconds' ? 'seconds, or a duration (5m, 1h)' : undefined,
        kind === 'days' ? 'days, or a duration (30d, 720h)' : undefined,
        kind === 'secret-file'
          ? `a file holding the ${name} (- for standard input), never the value itself`
          : undefined,
      ]
        .filter(Boolean)
        .join('; '),
    });
  };
  for (const p of op.queryParams)
    add(
      p.name,
      { ...(p.schema as Schema), description: p.description || (p.schema as Schema).description },
      'query',
      p.required,
    );
  const body = op.body?.schema as Schema | undefined;
  for (const [name, schema] of Object.entries(body?.properties ?? {})) {
    add(name, schema, 'body', body?.required?.includes(name) ?? false);
  }
  return flags;
}

/** Turns one flag's text into its wire value; a bad value is a usage error naming the flag. */
export function parseValue(
  flag: FlagSpec,
  raw: unknown,
  context: { now: number; stdin: () => string } = { now: Date.now(), stdin: () => '' },
): unknown {
  if (flag.kind === 'boolean') return raw === true || raw === 'true';
  const values = [raw].flat() as string[];
  const text = values[values.length - 1] as string;
  switch (flag.kind) {
    case 'instant':
      return parseInstant(`--${flag.flag}`, text, flag.direction ?? 'past', context.now);
    case 'seconds':
    case 'days':
      return parseAmount(`--${flag.flag}`, text, flag.kind);
    case 'secret-file':
      return readSecretValue(`--${flag.flag}`, text, context.stdin);
    case 'number': {
      const n = Number(text);
      if (text.trim() === '' || !Number.isFinite(n))
        throw new UsageError(`--${flag.flag} must be a number (got ${JSON.stringify(text)})`);
      return n;
    }
    case 'list':
      return values
        .flatMap((v) => v.split(','))
        .map((v) => v.trim())
        .filter((v) => v !== '');
    case 'json':
      try {
        return JSON.parse(text);
      } catch {
        throw new UsageError(`--${flag.flag} must be JSON (got ${JSON.stringify(text.slice(0, 40))})`);
      }
    default:
      return text;
  }
}

/** The JSON body of `--body-file <path|->` or `--body <json>`, which flags then override. */
export function readBodyOption(
  options: { body?: string; bodyFile?: string },
  stdin: () => string,
): Record<string, unknown> | undefined {
  let text: string | undefined;
  let source = '--body';
  if (options.body !== undefined && options.bodyFile !== undefined)
    throw new UsageError('give --body or --body-file, not both');
  if (options.body !== undefined) text = options.body;
  if (options.bodyFile !== undefined) {
    source = options.bodyFile === '-' ? 'standard input' : options.bodyFile;
    try {
      text = options.bodyFile === '-' ? stdin() : readFileSync(options.bodyFile, 'utf8');
    } catch (error) {
      throw new UsageError(
        `--body-file: cannot read ${options.bodyFile} (${(error as { code?: string }).code ?? 'unreadable'})`,
      );
    }
  }
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${source} is not valid JSON: ${(error as Error).message.split('\n')[0]}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new UsageError(`${source} must hold a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

/**
 * A secret from a file (or `-`, standard input): its text without the one line break an editor
 * or `echo` adds. Leading and inner whitespace belong to the secret.
 */
export function readSecretValue(flag: string, path: string, stdin: () => string): string {
  let text: string;
  try {
    text = path === '-' ? stdin() : readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(
      `${flag}: cannot read ${path} (${(error as { code?: string }).code ?? 'unreadable'})`,
    );
  }
  const value = text.replace(/\r?\n$/, '');
  if (value === '') throw new UsageError(`${flag}: ${path === '-' ? 'standard input' : path} is empty`);
  return value;
}
