import { z } from 'zod';
import { CertwrightError, type FieldIssue, fail, isCertwrightError, validationError } from '../errors.js';
import type { ReferenceCounts } from '../ports/storage.js';

/**
 * Validates a service input with its zod schema. Services are an edge too (embedders call them
 * in-process), so they check their inputs the same way the REST layer does and name each field.
 */
export function parseInput<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  throw validationError(
    result.error.issues.flatMap((issue) => {
      // A strict object names each unknown member as the field, not the object that holds it.
      if (issue.code === 'unrecognized_keys') {
        return issue.keys.map((key) => ({
          field: [...issue.path, key].join('.'),
          message: 'is not a known field',
        }));
      }
      const missing = issue.code === 'invalid_type' && (issue as { input?: unknown }).input === undefined;
      return [
        {
          field: issue.path.length > 0 ? issue.path.join('.') : 'body',
          message: missing ? 'is required' : issue.message,
        },
      ];
    }),
  );
}

/** A 400 for ids that name no record of the expected kind; every offending field is listed. */
export function invalidReference(fields: FieldIssue[]): CertwrightError {
  return new CertwrightError('invalid_reference', fields.map((f) => `${f.field}: ${f.message}`).join('; '), {
    fields,
  });
}

/**
 * 409 for a delete that would orphan other records. The body names the record and carries the
 * counts so an operator sees what still points at it.
 */
export function stillReferenced(what: string, id: string, counts: ReferenceCounts): CertwrightError | null {
  const used = Object.entries(counts).filter(([, n]) => n > 0);
  if (used.length === 0) return null;
  const summary = used.map(([kind, n]) => `${n} ${kind}`).join(', ');
  return fail('still_referenced', `${what} '${id}' is still referenced by ${summary}`, {
    extra: { resource: what, id, references: Object.fromEntries(used) },
  });
}

/**
 * A yes/no input: a boolean in-process, `true`/`false`/`1`/`0` in a query string; anything
 * else is a 400 naming the field.
 */
export const booleanFlag = z.union([
  z.boolean(),
  z.enum(['true', 'false', '1', '0']).transform((text) => text === 'true' || text === '1'),
]);

/**
 * A list of values: an array in-process, `a,b` or a repeated parameter in a query string.
 * Empty entries are dropped; at least one value must remain and each must pass `item`.
 */
/** An instant in a query: a Date, or an RFC 3339 date-time with an offset. */
export const instantSchema = z.union([
  z.date(),
  z.iso.datetime({ offset: true }).transform((s) => new Date(s)),
]);

export const commaList = <T extends z.ZodType>(item: T) =>
  z.preprocess(
    (value) =>
      typeof value === 'string' || Array.isArray(value)
        ? [value]
            .flat()
            .flatMap((v) => (typeof v === 'string' ? v.split(',').map((part) => part.trim()) : [v]))
            .filter((v) => v !== '')
        : value,
    z.array(item).min(1),
  );

/**
 * The fields a caller set: absent (undefined) ones are left out rather than passed on, so a
 * storage filter or patch never reads "set to undefined".
 */
export function definedFields<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<T>;
}

// The page types live with the paging rule; re-exported for the services that import them here.
export type { ListPage, Paged } from './paging.js';

/** Rewrites the storage's unique-violation into a 409 that names the taken name. */
export function nameTaken(name: string | undefined, what = 'team') {
  return (error: unknown): never => {
    if (isCertwrightError(error) && error.code === 'conflict' && name !== undefined) {
      throw fail('duplicate', `a ${what} named '${name}' already exists`, {
        extra: { resource: what, name },
      });
    }
    throw error;
  };
}
