import { z } from 'zod';
import { DEFAULT_PER_PAGE, MAX_PER_PAGE } from '../domain/common.js';

/**
 * `page` ≥ 1 and `per_page` 1–500 (default 50), DESIGN §5. Query strings arrive as text, so
 * numbers are coerced; anything out of range is a 400 naming the parameter rather than a
 * silent clamp, so a client learns about its bug.
 */
export const pageQuerySchema = z.object({
  page: z.coerce.number().int().min(1).default(1),
  per_page: z.coerce.number().int().min(1).max(MAX_PER_PAGE).default(DEFAULT_PER_PAGE),
});
