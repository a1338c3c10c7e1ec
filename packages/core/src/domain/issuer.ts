import { z } from 'zod';
import { idSchema, timestampSchema } from './common.js';

export const ISSUER_TYPES = [
  'Local',
  'ACME',
  'StepCA',
  'VaultPKI',
  'EJBCA',
  'ADCS',
  'AWSPCA',
  'GoogleCAS',
  'DigiCert',
  'Sectigo',
] as const;
export const issuerTypeSchema = z.enum(ISSUER_TYPES);
export type IssuerType = z.infer<typeof issuerTypeSchema>;

/** Connector configuration; may hold secrets, so it is stored sealed and never serialized. */
export const issuerConfigSchema = z.record(z.string(), z.unknown());
export type IssuerConfig = z.infer<typeof issuerConfigSchema>;

/** The public issuer record: no config, because config may carry credentials. */
export const issuerSchema = z.object({
  id: idSchema,
  /** Unique across issuers. */
  name: z.string().min(1).max(255),
  type: issuerTypeSchema,
  enabled: z.boolean(),
  created_at: timestampSchema,
  updated_at: timestampSchema,
});
export type Issuer = z.infer<typeof issuerSchema>;

/** An issuer with its decrypted connector config, only returned by `getWithConfig`. */
export interface IssuerWithConfig extends Issuer {
  config: IssuerConfig;
}
