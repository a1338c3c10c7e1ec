import { readFileSync } from 'node:fs';
import type { OperationSpec } from '@certwright/client';
import { UsageError } from './exit-codes.js';

type Schema = {
  type?: string | string[];
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

export type ValueKind = 'string' | 'number' | 'boolean' | 'list' | 'json';

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

function kindOf(schema: Schema): { kind: ValueKind; choices?: string[] } {
  const variants = (schema.anyOf ?? [schema]).filter((s) => s.type !== 'null');
  const types = new Set(variants.flatMap((s) => [s.type ?? 'any'].flat()));
  if (types.has('boolean')) return { kind: 'boolean' };
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
    const flag = name.replace(/_/g, '-');
    if (RESERVED.has(flag) || flags.some((f) => f.flag === flag)) return;
    const { kind, choices } = kindOf(schema);
    const listChoices =
      kind === 'list' ? schema.items?.enum?.filter((v): v is string => typeof v === 'string') : undefined;
    flags.push({
      name,
      flag,
      where,
      kind,
      required,
      ...(choices ? { choices } : {}),
      description: [
        schema.description ?? HELP[name] ?? `${where === 'query' ? 'filter' : 'field'} ${name}`,
        listChoices?.length ? `one or more of ${listChoices.join(', ')}` : undefined,
        kind === 'list' ? 'comma-separated or repeated' : undefined,
        kind === 'json' ? 'JSON' : undefined,
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
export function parseValue(flag: FlagSpec, raw: unknown): unknown {
  if (flag.kind === 'boolean') return raw === true || raw === 'true';
  const values = [raw].flat() as string[];
  const text = values[values.length - 1] as string;
  switch (flag.kind) {
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
