import { z } from 'zod';

/**
 * The answer of the per-profile protocol admin routes (EST, SCEP, SCEP device management): the
 * profiles, how many, and when the figures were read.
 */
export function profilesEnvelope<T extends z.ZodTypeAny>(profile: T) {
  return z.object({
    profiles: z.array(profile),
    profile_count: z.number().int(),
    generated_at: z.string(),
  });
}

export function profilesBody<T>(profiles: T[], now: Date) {
  return { profiles, profile_count: profiles.length, generated_at: now.toISOString() };
}
