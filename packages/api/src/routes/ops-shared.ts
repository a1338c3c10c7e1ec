import type { PageResult } from '@certwright/core';
import { z } from 'zod';

/*
 * Small pieces shared by the agent, target, job, notification and audit routes.
 */

/** A query integer: digits only, so `per_page=abc` is a 400 naming the field. */
export const queryInt = z
  .string()
  .regex(/^-?\d{1,9}$/, 'must be an integer')
  .transform((text) => Number.parseInt(text, 10));

export const pageQuery = {
  page: queryInt.optional().describe('page number, from 1'),
  per_page: queryInt.optional().describe('items per page, default 50, at most 500'),
};

/** `true`/`false`/`1`/`0`; anything else is a 400. */
export const queryBool = z
  .enum(['true', 'false', '1', '0'])
  .transform((text) => text === 'true' || text === '1');

export const idParams = z.object({ id: z.string().min(1).max(128) });

/** DESIGN §5 list envelope. Page numbers are reported after clamping. */
export function envelope<T>(result: PageResult<T>, page: number | undefined, perPage: number | undefined) {
  const p = page === undefined || page < 1 ? 1 : page;
  const per = perPage === undefined || perPage < 1 ? 50 : Math.min(perPage, 500);
  return { data: result.items, total: result.total, page: p, per_page: per };
}

export const envelopeSchema = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item),
    total: z.number().int(),
    page: z.number().int(),
    per_page: z.number().int(),
  });

/** `status=a,b` and `status=a&status=b` both become a list. */
export const listParam = <T extends z.ZodType<unknown, string>>(item: T) =>
  z
    .union([z.string(), z.array(z.string())])
    .transform((value) =>
      (Array.isArray(value) ? value : value.split(',')).map((v) => v.trim()).filter(Boolean),
    )
    .pipe(z.array(item).min(1));
