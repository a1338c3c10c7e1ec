import type { z } from 'zod';
import { CertwrightError, type FieldIssue, fail, validationError } from '../errors.js';
import type { ReferenceCounts } from '../ports/storage.js';

/**
 * Validates a service input with its zod schema. Services are an edge too (embedders call them
 * in-process), so they check their inputs the same way the REST layer does and name each field.
 */
export function parseInput<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  throw validationError(
    result.error.issues.map((issue) => {
      const missing = issue.code === 'invalid_type' && (issue as { input?: unknown }).input === undefined;
      return {
        field: issue.path.length > 0 ? issue.path.join('.') : 'body',
        message: missing ? 'is required' : issue.message,
      };
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

/** Page request of every list call: page ≥ 1, per_page 1–500 (DESIGN §5). */
export interface ListPage {
  page?: number;
  per_page?: number;
}

export interface Paged<T> {
  data: T[];
  total: number;
  page: number;
  per_page: number;
}
