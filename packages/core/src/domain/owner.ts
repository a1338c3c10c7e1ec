import { z } from 'zod';
import { idSchema, timestampSchema } from './common.js';

export const ownerSchema = z.object({
  id: idSchema,
  name: z.string().min(1).max(255),
  email: z.string().max(320).nullable(),
  created_at: timestampSchema,
  updated_at: timestampSchema,
});
export type Owner = z.infer<typeof ownerSchema>;
