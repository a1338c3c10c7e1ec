import { type FieldIssue, validationError } from '@certwright/core';
import type { z } from 'zod';

/** Validates one part of a request; issues name the field, prefixed by where it came from. */
export function parsePart<T extends z.ZodType>(schema: T, value: unknown, where: string): z.output<T> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  throw validationError(result.error.issues.flatMap((issue) => toFieldIssues(issue, where)));
}

function toFieldIssues(issue: z.core.$ZodIssue, where: string): FieldIssue[] {
  // A strict object names each unknown member as the field, not the object that holds it.
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({
      field: [...issue.path, key].join('.'),
      message: 'is not a known field',
    }));
  }
  const field = issue.path.length > 0 ? issue.path.join('.') : where;
  // Whatever the schema (string, enum, union), an absent value is reported the same way.
  const missing = 'input' in issue && issue.input === undefined;
  return [{ field, message: missing ? 'is required' : issue.message }];
}

/** URLSearchParams as an object; a repeated key becomes an array. */
export function queryObject(params: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(params.keys())) {
    const all = params.getAll(key);
    out[key] = all.length === 1 ? (all[0] as string) : all;
  }
  return out;
}

/** Parses a JSON body; an empty body is `undefined` so schemas decide if it is allowed. */
export function parseJsonBody(bytes: Uint8Array): unknown {
  if (bytes.byteLength === 0) return undefined;
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw validationError([{ field: 'body', message: 'is not valid JSON' }]);
  }
}

/**
 * `application/json`, with or without `charset=utf-8` (RFC 8259 §8.1: JSON on the wire is
 * UTF-8). Form and text types are refused, which keeps browsers' cross-site simple requests
 * (form posts) away from the JSON routes.
 */
export function isJsonMediaType(value: string): boolean {
  const [type, ...params] = value.split(';').map((part) => part.trim().toLowerCase());
  if (type !== 'application/json') return false;
  return params.every((p) => !p.startsWith('charset=') || /^charset="?utf-8"?$/.test(p));
}
