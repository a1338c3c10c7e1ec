import { z } from 'zod';
import { KEY_ALGORITHMS, type KeyAlgorithm } from '../../pki/keys.js';

/** Request bodies of issue, renew and export (the REST routes and the OpenAPI document use them). */

export const issueRequestSchema = z.object({
  csr_pem: z
    .string()
    .min(1)
    .max(200_000)
    .optional()
    .describe('PKCS#10 PEM; absent → the server generates the key'),
  key_algorithm: z
    .enum(KEY_ALGORITHMS as [KeyAlgorithm, ...KeyAlgorithm[]])
    .optional()
    .describe('server-side key generation; default the first algorithm the profile allows, else ECDSA-P256'),
  validity_days: z
    .number()
    .int()
    .min(1)
    .max(3650)
    .optional()
    .describe(
      "default the profile's max_validity_days, else 90; without a profile at most 397 unless the server sets another cap",
    ),
});
export type IssueInput = z.input<typeof issueRequestSchema>;

export const exportFormatSchema = z.enum(['pem', 'der']);
export const pkcs12ExportSchema = z.object({
  format: z.literal('pkcs12'),
  password: z
    .string()
    .min(8)
    .max(1024)
    .describe('encrypts the PKCS#12 file (at least 8 characters); never stored or logged'),
});
