import { ApiError } from './api';

/**
 * The API's field errors (`errors: [{field, message}]` of a 400) by field, so a form shows each
 * at the input it names. `config.directory_url` is kept whole; a form maps it to its input.
 */
export function fieldErrors(error: unknown): Record<string, string> {
  if (!(error instanceof ApiError) || !Array.isArray(error.problem.errors)) return {};
  const out: Record<string, string> = {};
  for (const item of error.problem.errors as unknown[]) {
    if (!item || typeof item !== 'object') continue;
    const { field, message } = item as { field?: unknown; message?: unknown };
    if (typeof field === 'string' && typeof message === 'string' && !(field in out)) out[field] = message;
  }
  return out;
}

/** The first error among `fields` (a field and its sub-fields: `sans`, `sans.0`). */
export function errorFor(errors: Record<string, string>, ...fields: string[]): string | undefined {
  for (const [key, message] of Object.entries(errors)) {
    if (fields.some((f) => key === f || key.startsWith(`${f}.`))) return message;
  }
  return undefined;
}
