import { z } from 'zod';
import { idSchema, timestampSchema } from './common.js';

export const JOB_TYPES = ['Issuance', 'Renewal', 'Deployment', 'Validation'] as const;
export const jobTypeSchema = z.enum(JOB_TYPES);
export type JobType = z.infer<typeof jobTypeSchema>;

export const JOB_STATUSES = [
  'Pending',
  'AwaitingCSR',
  'Running',
  'Completed',
  'Failed',
  'Cancelled',
] as const;
export const jobStatusSchema = z.enum(JOB_STATUSES);
export type JobStatus = z.infer<typeof jobStatusSchema>;

/** Statuses that still count as work to do (agent retirement's pending_jobs). */
export const OPEN_JOB_STATUSES: readonly JobStatus[] = ['Pending', 'AwaitingCSR', 'Running'];

export const VERIFICATION_STATUSES = ['pending', 'success', 'failed', 'skipped'] as const;
export const verificationStatusSchema = z.enum(VERIFICATION_STATUSES);
export type VerificationStatus = z.infer<typeof verificationStatusSchema>;

export const jobSchema = z.object({
  id: idSchema,
  type: jobTypeSchema,
  status: jobStatusSchema,
  certificate_id: idSchema.nullable(),
  target_id: idSchema.nullable(),
  agent_id: idSchema.nullable(),
  /** Job-specific input, e.g. `{ "test": true }` for a target connection test. */
  payload: z.record(z.string(), z.unknown()),
  /** Job-specific output reported by whoever ran it. */
  result: z.record(z.string(), z.unknown()).nullable(),
  attempts: z.number().int().min(0),
  max_attempts: z.number().int().min(1),
  last_error: z.string().nullable(),
  /** CSR submitted by the agent for an AwaitingCSR job. */
  csr_pem: z.string().nullable(),
  scheduled_at: timestampSchema,
  started_at: timestampSchema.nullable(),
  completed_at: timestampSchema.nullable(),
  /** Who holds the claim and until when; a claim past its lease may be taken over. */
  locked_by: z.string().nullable(),
  lease_expires_at: timestampSchema.nullable(),
  verification_status: verificationStatusSchema.nullable(),
  verification_detail: z.string().nullable(),
  verified_at: timestampSchema.nullable(),
  created_at: timestampSchema,
  updated_at: timestampSchema,
});
export type Job = z.infer<typeof jobSchema>;
