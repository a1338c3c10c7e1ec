import { z } from 'zod';
import { idSchema, timestampSchema } from './common.js';

export const teamSchema = z.object({
  id: idSchema,
  /** Unique across teams. */
  name: z.string().min(1).max(255),
  description: z.string().max(2000).nullable(),
  created_at: timestampSchema,
  updated_at: timestampSchema,
});
export type Team = z.infer<typeof teamSchema>;
