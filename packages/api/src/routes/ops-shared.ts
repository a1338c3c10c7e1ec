import { z } from 'zod';

/*
 * Small pieces shared by the agent, target, job, notification and audit routes.
 */

/** A query integer: digits only, so `limit=abc` is a 400 naming the field. */
export const queryInt = z
  .string()
  .regex(/^-?\d{1,9}$/, 'must be an integer')
  .transform((text) => Number.parseInt(text, 10));

export const idParams = z.object({ id: z.string().min(1).max(128) });

/** DESIGN §5 list envelope; the page numbers are those applied (core's paging rule). */
export const envelopeSchema = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item),
    total: z.number().int(),
    page: z.number().int(),
    per_page: z.number().int(),
  });
