import {
  acmeSettingsSchema,
  allowedKeyAlgorithmSchema,
  type CertificateProfile,
  ENROLLMENT_SECRET_FIELDS,
  type EnrollmentProtocol,
  EXTENDED_KEY_USAGES,
  enrollmentDefaultsSchema,
  estSettingsSchema,
  profileCreateSchema,
  profileListSchema,
  profileUpdateSchema,
  type Services,
  scepSettingsSchema,
} from '@certwright/core';
import { z } from 'zod';
import type { RouteSpec } from '../http/route.js';
import { crudRoutes, timestamp } from './crud.js';

export const profileJson = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  allowed_key_algorithms: z.array(allowedKeyAlgorithmSchema),
  allowed_ekus: z.array(z.enum(EXTENDED_KEY_USAGES)),
  required_csr_attributes: z.array(z.string()),
  must_staple: z.boolean(),
  allow_ip_sans: z.boolean().describe('whether certificates under this profile may name IP addresses'),
  short_lived_validity_hours: z
    .number()
    .int()
    .nullable()
    .describe(
      'certificates living at most this many hours are short-lived (RFC 9608): noRevAvail, no CRL or OCSP URL, not revocable; null: none',
    ),
  max_validity_days: z.number().int(),
  key_generation: z.enum(['agent', 'server']),
  enrollment: enrollmentDefaultsSchema.describe(
    'issuer, owner, team and renewal policy of the certificates enrollment protocols create',
  ),
  acme: acmeSettingsSchema.describe('the ACME server of this profile (docs/protocols/acme.md)'),
  est: estSettingsSchema
    .extend({ basic_credentials_set: z.boolean().describe('whether HTTP Basic credentials are configured') })
    .describe('the EST server of this profile (docs/protocols/est.md)'),
  scep: scepSettingsSchema
    .extend({
      challenge_password_set: z.boolean().describe('whether a static challenge password is configured'),
    })
    .describe('the SCEP server of this profile (docs/protocols/scep.md)'),
  created_at: timestamp,
  updated_at: timestamp,
});

/** A protocol block as shown: its settings plus `<secret>_set` flags, never a secret. */
function block<T extends object>(profile: CertificateProfile, protocol: EnrollmentProtocol, settings: T) {
  const set = profile.enrollment_secrets_set[protocol] ?? [];
  return {
    ...settings,
    ...Object.fromEntries(ENROLLMENT_SECRET_FIELDS[protocol].map((f) => [`${f}_set`, set.includes(f)])),
  };
}

const profileView = (p: CertificateProfile) => ({
  id: p.id,
  name: p.name,
  description: p.description,
  allowed_key_algorithms: p.allowed_key_algorithms,
  allowed_ekus: p.allowed_ekus,
  required_csr_attributes: p.required_csr_attributes,
  must_staple: p.must_staple,
  allow_ip_sans: p.allow_ip_sans,
  short_lived_validity_hours: p.short_lived_validity_hours,
  max_validity_days: p.max_validity_days,
  key_generation: p.key_generation,
  enrollment: p.enrollment,
  acme: block(p, 'acme', p.acme),
  est: block(p, 'est', p.est),
  scep: block(p, 'scep', p.scep),
  created_at: p.created_at,
  updated_at: p.updated_at,
});

/** /api/v1/profiles. */
export function profileRoutes(services: Services): RouteSpec[] {
  return crudRoutes({
    path: '/api/v1/profiles',
    tag: 'profiles',
    name: 'Profile',
    noun: 'certificate profile',
    record: profileJson,
    createBody: profileCreateSchema,
    updateBody: profileUpdateSchema,
    listQuery: profileListSchema,
    service: services.profiles,
    view: profileView,
    deleteNote: '409 while certificates reference it',
    permissions: { read: 'profile.read', write: 'profile.write' },
  });
}
