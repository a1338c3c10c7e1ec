import { z } from 'zod';
import { idSchema, timestampSchema } from './common.js';

/**
 * What one SCEP probe found (docs/protocols/scep-probe.md): the capabilities a server
 * advertises (GetCACaps, RFC 8894 §3.5.2) and the CA certificate it hands out (GetCACert,
 * RFC 8894 §4.2). The CA fields are null when no certificate was obtained; `error` is null
 * exactly when both requests succeeded and the certificate was read.
 */
export const scepProbeSchema = z.object({
  id: idSchema,
  url: z.string().max(2048),
  /** The server answered HTTP at all (any status), whatever came of the answer. */
  reachable: z.boolean(),
  /** GetCACaps keywords as sent (trimmed, empty lines dropped), at most 64. */
  capabilities: z.array(z.string().max(128)).max(64),
  supports_rfc8894: z.boolean(),
  supports_aes: z.boolean(),
  supports_post: z.boolean(),
  supports_renewal: z.boolean(),
  supports_sha256: z.boolean(),
  supports_sha512: z.boolean(),
  ca_subject: z.string().nullable(),
  ca_issuer: z.string().nullable(),
  ca_not_before: timestampSchema.nullable(),
  ca_not_after: timestampSchema.nullable(),
  /** "RSA 2048", "ECDSA P-256", "Ed25519", "DSA 2048" … */
  key_algorithm: z.string().max(128).nullable(),
  /** Certificates in the GetCACert answer (CA, RA and intermediates); 0 without an answer. */
  chain_length: z.number().int().min(0),
  probed_at: timestampSchema,
  duration_ms: z.number().int().min(0),
  error: z.string().max(2000).nullable(),
});
export type ScepProbe = z.infer<typeof scepProbeSchema>;

/** A probe as reported: expiry derived from `ca_not_after` at the time of the query. */
export interface ScepProbeResult extends ScepProbe {
  /** Whole days from the query until `ca_not_after`, negative once expired; null without a CA. */
  days_to_expiry: number | null;
  /** `ca_not_after` lies before the time of the query; null without a CA. */
  expired: boolean | null;
}
