import {
  allowedKeyAlgorithmSchema,
  type CertificateProfile,
  EXTENDED_KEY_USAGES,
  ISSUER_TYPES,
  type Issuer,
  issuerCreateSchema,
  issuerListSchema,
  issuerUpdateSchema,
  ownerCreateSchema,
  ownerListSchema,
  ownerUpdateSchema,
  profileCreateSchema,
  profileListSchema,
  profileUpdateSchema,
  type Services,
  teamCreateSchema,
  teamListSchema,
  teamUpdateSchema,
} from '@certwright/core';
import { z } from 'zod';
import type { RouteSpec } from '../http/route.js';
import { crudRoutes, timestamp } from './crud.js';

export const ownerJson = z.object({
  id: z.string(),
  name: z.string(),
  email: z.string().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

export const teamJson = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

/** No `config`: it may hold credentials and is write-only. */
export const issuerJson = z.object({
  id: z.string(),
  name: z.string(),
  type: z.enum(ISSUER_TYPES),
  enabled: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
});

export const profileJson = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  allowed_key_algorithms: z.array(allowedKeyAlgorithmSchema),
  allowed_ekus: z.array(z.enum(EXTENDED_KEY_USAGES)),
  required_csr_attributes: z.array(z.string()),
  must_staple: z.boolean(),
  max_validity_days: z.number().int(),
  key_generation: z.enum(['agent', 'server']),
  created_at: timestamp,
  updated_at: timestamp,
});

/** Fields picked one by one, so a field added to the record later never leaks by default. */
export const issuerView = (i: Issuer) => ({
  id: i.id,
  name: i.name,
  type: i.type,
  enabled: i.enabled,
  created_at: i.created_at,
  updated_at: i.updated_at,
});

const profileView = (p: CertificateProfile) => ({
  id: p.id,
  name: p.name,
  description: p.description,
  allowed_key_algorithms: p.allowed_key_algorithms,
  allowed_ekus: p.allowed_ekus,
  required_csr_attributes: p.required_csr_attributes,
  must_staple: p.must_staple,
  max_validity_days: p.max_validity_days,
  key_generation: p.key_generation,
  created_at: p.created_at,
  updated_at: p.updated_at,
});

/** /api/v1/owners, /teams, /issuers, /profiles (DESIGN §5). */
export function referenceDataRoutes(services: Services): RouteSpec[] {
  return [
    ...crudRoutes({
      path: '/api/v1/owners',
      tag: 'owners',
      name: 'Owner',
      noun: 'owner',
      record: ownerJson,
      createBody: ownerCreateSchema,
      updateBody: ownerUpdateSchema,
      listQuery: ownerListSchema,
      service: services.owners,
      deleteNote: '409 while certificates reference it',
    }),
    ...crudRoutes({
      path: '/api/v1/teams',
      tag: 'teams',
      name: 'Team',
      noun: 'team',
      record: teamJson,
      createBody: teamCreateSchema,
      updateBody: teamUpdateSchema,
      listQuery: teamListSchema,
      service: services.teams,
      deleteNote: '409 while certificates reference it',
    }),
    ...crudRoutes({
      path: '/api/v1/issuers',
      tag: 'issuers',
      name: 'Issuer',
      noun: 'issuer',
      record: issuerJson,
      createBody: issuerCreateSchema,
      updateBody: issuerUpdateSchema,
      listQuery: issuerListSchema,
      service: services.issuers,
      view: issuerView,
      deleteNote: '409 while certificates or versions reference it',
    }),
    ...crudRoutes({
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
    }),
  ];
}
