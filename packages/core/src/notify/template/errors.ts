import { type CertwrightError, fail } from '../../errors.js';

/** Which bound a template broke. */
export type TemplateLimit = 'template_size' | 'depth' | 'steps' | 'output';

/**
 * A parse or execution failure at a source offset. Internal: the public functions turn it into
 * a `CertwrightError` (reason `invalid_input`) carrying the line and column.
 */
export class TemplateError extends Error {
  constructor(
    message: string,
    readonly pos: number,
    readonly limit?: TemplateLimit,
  ) {
    super(message);
  }
}

/** Line and column (both from 1, columns in characters) of a UTF-16 offset. */
export function lineAndColumn(source: string, pos: number): { line: number; column: number } {
  const before = source.slice(0, Math.max(0, Math.min(pos, source.length)));
  const lineStart = before.lastIndexOf('\n') + 1;
  let line = 1;
  for (let i = before.indexOf('\n'); i >= 0; i = before.indexOf('\n', i + 1)) line++;
  return { line, column: [...before.slice(lineStart)].length + 1 };
}

/**
 * The typed error for a template failure: `invalid_input`, the position in the message, in
 * `fields` (the template's field name) and in `extra` (`line`, `column`, and `limit` for a
 * broken bound).
 */
export function templateFailure(source: string, error: TemplateError, field: string): CertwrightError {
  const { line, column } = lineAndColumn(source, error.pos);
  const message = error.limit
    ? `template: ${error.message}`
    : `template: line ${line}, column ${column}: ${error.message}`;
  return fail('invalid_input', message, {
    fields: [{ field, message }],
    extra: error.limit ? { limit: error.limit } : { line, column },
  });
}
