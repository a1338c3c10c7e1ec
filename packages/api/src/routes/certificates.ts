import {
  CERTIFICATE_SOURCES,
  CERTIFICATE_STATUSES,
  type CertificateVersion,
  certificateCreateSchema,
  certificateListSchema,
  certificateUpdateSchema,
  REVOCATION_REASONS,
  revokeSchema,
  type Services,
  versionListSchema,
} from '@certwright/core';
import { z } from 'zod';
import { actorOf } from '../auth/principal.js';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { envelope, idParams, pageOf, timestamp } from './crud.js';

export const certificateJson = z.object({
  id: z.string(),
  name: z.string(),
  common_name: z.string(),
  sans: z.array(z.string()),
  status: z.enum(CERTIFICATE_STATUSES),
  source: z.enum(CERTIFICATE_SOURCES).describe('"" is unspecified provenance'),
  issuer_id: z.string(),
  owner_id: z.string(),
  team_id: z.string(),
  renewal_policy_id: z.string(),
  profile_id: z.string().nullable(),
  environment: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  tags: z.array(z.string()),
  current_version_id: z.string().nullable(),
  expires_at: timestamp.nullable().describe('not_after of the latest version'),
  last_renewal_at: timestamp.nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

/** The list envelope plus keyset paging and the estimated-total flag (docs/api/inventory.md). */
const certificateListJson = envelope(certificateJson).extend({
  total_estimated: z
    .boolean()
    .describe("true when more than 1,000 certificates match: total is then the database's estimate"),
  next_cursor: z
    .string()
    .nullable()
    .describe(
      'send as cursor for the next page (keyset: as fast on page 10,000 as on page 2); null on the last page',
    ),
});

export const versionJson = z.object({
  id: z.string(),
  certificate_id: z.string(),
  issuer_id: z.string(),
  serial_number: z.string().describe('lower-case hex'),
  fingerprint_sha256: z.string().describe('lower-case hex SHA-256 of the DER certificate'),
  key_algorithm: z.string(),
  key_size: z.number().int(),
  subject: z.string(),
  issued_at: timestamp,
  not_before: timestamp.describe('validity start'),
  not_after: timestamp.describe('validity end'),
  csr_pem: z.string().nullable(),
  cert_pem: z.string(),
  chain_pem: z.string(),
  revoked_at: timestamp.nullable(),
  revocation_reason: z.enum(REVOCATION_REASONS).nullable(),
  created_at: timestamp,
});

export const keyDataJson = z.object({
  certificate_id: z.string(),
  version_id: z.string(),
  serial_number: z.string(),
  fingerprint_sha256: z.string(),
  key_algorithm: z.string(),
  key_size: z.number().int(),
  issued_at: timestamp,
  not_before: timestamp,
  not_after: timestamp,
  csr_pem: z.string().nullable(),
});

/** Public fields only: a version fetched with its key must never reach this view unfiltered. */
const versionView = (v: CertificateVersion) => ({
  id: v.id,
  certificate_id: v.certificate_id,
  issuer_id: v.issuer_id,
  serial_number: v.serial_number,
  fingerprint_sha256: v.fingerprint_sha256,
  key_algorithm: v.key_algorithm,
  key_size: v.key_size,
  subject: v.subject,
  issued_at: v.issued_at,
  not_before: v.not_before,
  not_after: v.not_after,
  csr_pem: v.csr_pem,
  cert_pem: v.cert_pem,
  chain_pem: v.chain_pem,
  revoked_at: v.revoked_at,
  revocation_reason: v.revocation_reason,
  created_at: v.created_at,
});

const TAG = 'certificates';
const ITEM = '/api/v1/certificates/{id}';

/**
 * /api/v1/certificates. The bulk routes live in bulk.ts and are registered before
 * these, so `/certificates/bulk-*` never reaches `{id}`.
 */
export function certificateRoutes(services: Services): RouteSpec[] {
  const certs = services.certificates;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/certificates',
      operationId: 'listCertificates',
      permission: 'cert.read',
      summary: 'List certificates with filters, free-text search and sorting',
      tags: [TAG],
      query: certificateListSchema,
      responses: { 200: { description: 'one page of certificates', schema: certificateListJson } },
      handle: async ({ query }) => {
        const list = await certs.list(query);
        return {
          status: 200,
          body: {
            ...pageOf(list, (c) => c),
            total_estimated: list.total_estimated,
            next_cursor: list.next_cursor,
          },
        };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/certificates',
      operationId: 'createCertificate',
      permission: 'cert.write',
      summary: 'Create a certificate (status Pending); policy rules are evaluated against it',
      tags: [TAG],
      body: certificateCreateSchema,
      responses: { 201: { description: 'the certificate created', schema: certificateJson } },
      handle: async ({ body, principal }) => ({
        status: 201,
        body: await certs.create(actorOf(principal), body),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: ITEM,
      operationId: 'getCertificate',
      permission: 'cert.read',
      summary: 'Get one certificate',
      tags: [TAG],
      params: idParams,
      responses: {
        200: { description: 'the certificate', schema: certificateJson },
        404: { description: 'unknown id' },
      },
      handle: async ({ params }) => ({ status: 200, body: await certs.get(params.id) }),
    }),
    defineRoute({
      method: 'PUT',
      path: ITEM,
      operationId: 'updateCertificate',
      permission: 'cert.write',
      summary: 'Update a certificate; omitted fields keep their values; policy rules are re-evaluated',
      tags: [TAG],
      params: idParams,
      body: certificateUpdateSchema,
      responses: {
        200: { description: 'the certificate after the update', schema: certificateJson },
        404: { description: 'unknown id' },
      },
      handle: async ({ params, body, principal }) => ({
        status: 200,
        body: await certs.update(actorOf(principal), params.id, body),
      }),
    }),
    defineRoute({
      method: 'DELETE',
      path: ITEM,
      operationId: 'deleteCertificate',
      permission: 'cert.write',
      summary:
        'Delete a certificate that was never issued (409 when it has versions or open jobs: archive it)',
      tags: [TAG],
      params: idParams,
      responses: {
        204: { description: 'deleted' },
        404: { description: 'unknown id' },
        409: { description: 'has versions or open jobs' },
      },
      handle: async ({ params, principal }) => {
        await certs.delete(actorOf(principal), params.id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'POST',
      path: `${ITEM}/archive`,
      operationId: 'archiveCertificate',
      permission: 'cert.write',
      summary: 'Archive a certificate (status Archived; its open jobs are cancelled)',
      tags: [TAG],
      params: idParams,
      responses: {
        200: { description: 'the archived certificate', schema: certificateJson },
        404: { description: 'unknown id' },
      },
      handle: async ({ params, principal }) => ({
        status: 200,
        body: await certs.archive(actorOf(principal), params.id),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: `${ITEM}/revoke`,
      operationId: 'revokeCertificate',
      permission: 'cert.revoke',
      summary: 'Revoke a certificate and all its versions',
      tags: [TAG],
      params: idParams,
      body: revokeSchema.optional(),
      responses: {
        200: { description: 'the revoked certificate', schema: certificateJson },
        404: { description: 'unknown id' },
        409: { description: 'already revoked' },
      },
      handle: async ({ params, body, principal }) => ({
        status: 200,
        body: await certs.revoke(actorOf(principal), params.id, body?.reason ?? 'unspecified'),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: `${ITEM}/versions`,
      operationId: 'listCertificateVersions',
      permission: 'cert.read',
      summary: 'List the versions (issued certificates) of a certificate, newest first',
      tags: [TAG],
      params: idParams,
      query: versionListSchema,
      responses: {
        200: { description: 'one page of versions', schema: envelope(versionJson) },
        404: { description: 'unknown id' },
      },
      handle: async ({ params, query }) => ({
        status: 200,
        body: pageOf(await certs.versions(params.id, query), versionView),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: `${ITEM}/key-data`,
      operationId: 'getCertificateKeyData',
      permission: 'cert.read',
      summary:
        'Key data of the latest version: serial, SHA-256 fingerprint, key algorithm and size, validity, CSR',
      tags: [TAG],
      params: idParams,
      responses: {
        200: { description: 'key data of the latest version', schema: keyDataJson },
        404: { description: 'unknown certificate, or no version issued yet' },
      },
      handle: async ({ params }) => ({ status: 200, body: await certs.keyData(params.id) }),
    }),
  ];
}
