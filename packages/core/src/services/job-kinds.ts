import type { JobType } from '../domain/job.js';

/**
 * Payload `kind` of the two Validation jobs the server creates for agents: a connection test
 * of a target, and the verification of a completed deployment (payload `job_id`).
 */
export const VALIDATION_KINDS = {
  connectionTest: 'connection_test',
  verification: 'deployment_verification',
} as const;

/**
 * The job kinds an agent carries out and reports on. Issuance and Renewal are the server's
 * own: an agent only submits the CSR of one that awaits it, and the server's pipeline signs
 * and stores the version, so no agent can declare a certificate issued.
 */
export const AGENT_JOB_TYPES: readonly JobType[] = ['Deployment', 'Validation'];
