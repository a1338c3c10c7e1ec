import { z } from 'zod';
import { idSchema, timestampSchema } from './common.js';

export const EXTENDED_KEY_USAGES = [
  'serverAuth',
  'clientAuth',
  'codeSigning',
  'emailProtection',
  'timeStamping',
] as const;
export const extendedKeyUsageSchema = z.enum(EXTENDED_KEY_USAGES);
export type ExtendedKeyUsage = z.infer<typeof extendedKeyUsageSchema>;

export const KEY_ALGORITHMS = ['RSA', 'ECDSA', 'Ed25519'] as const;
export const keyAlgorithmSchema = z.enum(KEY_ALGORITHMS);
export type KeyAlgorithm = z.infer<typeof keyAlgorithmSchema>;

export const EC_CURVES = ['P-256', 'P-384', 'P-521'] as const;

/** One allowed algorithm with its permitted parameters (RSA sizes or EC curves). */
export const allowedKeyAlgorithmSchema = z.discriminatedUnion('algorithm', [
  z.object({ algorithm: z.literal('RSA'), sizes: z.array(z.number().int().min(2048).max(16384)).min(1) }),
  z.object({ algorithm: z.literal('ECDSA'), curves: z.array(z.enum(EC_CURVES)).min(1) }),
  z.object({ algorithm: z.literal('Ed25519') }),
]);
export type AllowedKeyAlgorithm = z.infer<typeof allowedKeyAlgorithmSchema>;

/** Where the private key is generated: by the agent (job starts AwaitingCSR) or the server. */
export const keyGenerationModeSchema = z.enum(['agent', 'server']);
export type KeyGenerationMode = z.infer<typeof keyGenerationModeSchema>;

export const certificateProfileSchema = z.object({
  id: idSchema,
  /** Unique across profiles. */
  name: z.string().min(1).max(255),
  description: z.string().max(2000).nullable(),
  allowed_key_algorithms: z.array(allowedKeyAlgorithmSchema),
  allowed_ekus: z.array(extendedKeyUsageSchema),
  /** EKU names, DN attribute names, PKCS#10 attribute names or `serialNumber` (spec §2.5). */
  required_csr_attributes: z.array(z.string().min(1).max(128)),
  must_staple: z.boolean(),
  max_validity_days: z.number().int().min(1).max(3650),
  key_generation: keyGenerationModeSchema,
  created_at: timestampSchema,
  updated_at: timestampSchema,
});
export type CertificateProfile = z.infer<typeof certificateProfileSchema>;
