import { z } from 'zod';
import { DEFAULT_PER_PAGE, MAX_PER_PAGE, type PageRequest, type PageResult } from '../domain/common.js';

/*
 * The one paging rule of every list: `page` below 1 becomes 1, `per_page`
 * below 1 becomes 50 and above 500 becomes 500; a value that is not an integer is a 400 naming
 * the parameter. Every list follows it (the retired-agents list first had it) so
 * that a client pages all of them the same way. Query strings arrive as text, so numbers are
 * coerced; in-process callers pass numbers.
 */
const integer = (what: string) =>
  z.coerce
    .number<number | string>({ error: `must be an integer` })
    .int(`must be an integer`)
    .optional()
    .describe(what);

export const pageQuerySchema = z.object({
  page: integer('page number, from 1; below 1 reads as 1').transform((p) =>
    p === undefined || p < 1 ? 1 : p,
  ),
  per_page: integer(
    `items per page, default ${DEFAULT_PER_PAGE}; below 1 reads as ${DEFAULT_PER_PAGE}, above ${MAX_PER_PAGE} as ${MAX_PER_PAGE}`,
  ).transform((n) => (n === undefined || n < 1 ? DEFAULT_PER_PAGE : Math.min(n, MAX_PER_PAGE))),
});

/** A list call's page request, as callers write it (`page`, `per_page`). */
export type ListPage = z.input<typeof pageQuerySchema>;
/** The page after the rule: both numbers present and in range. */
export type PageWindow = z.output<typeof pageQuerySchema>;

/** One page of a list, the list envelope: page numbers as applied, not as asked. */
export interface Paged<T> {
  data: T[];
  total: number;
  page: number;
  per_page: number;
}

/** The storage's page request for a window. */
export function storagePage(window: PageWindow): Required<PageRequest> {
  return { page: window.page, perPage: window.per_page };
}

/** A storage page as the envelope, with the window that produced it. */
export function paged<T>(result: PageResult<T>, window: PageWindow): Paged<T> {
  return { data: result.items, total: result.total, page: window.page, per_page: window.per_page };
}
