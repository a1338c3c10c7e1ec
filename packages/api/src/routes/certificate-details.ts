import type { Services } from '@certwright/core';
import { z } from 'zod';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { idParams, timestamp } from './crud.js';

const nameJson = z.object({
  text: z.string().describe('RFC 4514'),
  attributes: z.array(z.object({ type: z.string(), oid: z.string(), value: z.string() })),
});

/** One certificate decoded (core's describeCertificate): what `openssl x509 -text` shows, in fields. */
export const certificateDetailsJson = z.object({
  version: z.number().int(),
  serial_number: z.string().describe('lower-case hex'),
  subject: nameJson,
  issuer: nameJson,
  not_before: timestamp,
  not_after: timestamp,
  signature_algorithm: z.string(),
  public_key: z.object({
    algorithm: z.enum(['RSA', 'EC', 'Ed25519', 'Ed448', 'ML-DSA', 'SLH-DSA']),
    size: z.number().int().describe('bits: the modulus, the curve, or the encoded ML-DSA/SLH-DSA key'),
    curve: z.string().nullable(),
    parameter_set: z.string().nullable().describe('ML-DSA-65, SLH-DSA-SHA2-128S …; null for other keys'),
  }),
  fingerprint_sha256: z.string().describe('lower-case hex of the DER'),
  fingerprint_sha1: z.string().describe('lower-case hex of the DER'),
  self_signed: z.boolean(),
  subject_alt_names: z.object({
    dns: z.array(z.string()),
    ip: z.array(z.string()),
    email: z.array(z.string()),
    uri: z.array(z.string()),
    other: z.array(z.string()).describe('directoryName, registeredID and other forms, described'),
  }),
  key_usage: z.array(z.string()).nullable().describe('null when the extension is absent'),
  extended_key_usage: z.array(z.string()).nullable().describe('by name when known, else the OID'),
  basic_constraints: z
    .object({ ca: z.boolean(), path_length: z.number().int().nullable(), critical: z.boolean() })
    .nullable(),
  subject_key_identifier: z.string().nullable(),
  authority_key_identifier: z.string().nullable(),
  crl_distribution_points: z.array(z.string()),
  ocsp_urls: z.array(z.string()),
  ca_issuer_urls: z.array(z.string()),
  policies: z.array(z.string()).describe('policy OIDs'),
  extensions: z.array(z.object({ oid: z.string(), name: z.string().nullable(), critical: z.boolean() })),
  pem: z.string().describe('the certificate alone, PEM'),
});

const chainJson = {
  chain: z.array(certificateDetailsJson).describe('in the stored order: the issuing CA first'),
  chain_undecodable: z.number().int().describe('chain certificates the reader refused'),
};

const versionParams = z.object({
  id: z.string().min(1).max(128).describe('certificate id'),
  version_id: z.string().min(1).max(128).describe('version id'),
});

/**
 * Decoded views (docs/api/inventory.md#decoded-certificates): a version with its chain, a
 * discovered certificate with the chain its endpoint served, an issuer's CA chain. Decoding is
 * core's bounded reader; nothing here parses bytes itself.
 */
export function certificateDetailsRoutes(services: Services): RouteSpec[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/certificates/{id}/versions/{version_id}/details',
      operationId: 'getCertificateVersionDetails',
      permission: 'cert.read',
      summary: 'One version decoded (subject, SANs, key, extensions, fingerprints) with its chain',
      tags: ['certificates'],
      params: versionParams,
      responses: {
        200: {
          description: 'the decoded version',
          schema: z.object({
            certificate_id: z.string(),
            version_id: z.string(),
            current: z.boolean().describe("the certificate's current version"),
            private_key_held: z.boolean().describe('the server holds the key: PKCS#12 export is possible'),
            certificate: certificateDetailsJson,
            ...chainJson,
          }),
        },
        404: { description: 'unknown certificate, or a version of another certificate' },
      },
      handle: async ({ params }) => ({
        status: 200,
        body: await services.certificates.versionDetails(params.id, params.version_id),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/discovery/certificates/{id}/details',
      operationId: 'getDiscoveredCertificateDetails',
      permission: 'scan.read',
      summary: 'A discovered certificate decoded, with the chain its endpoint served',
      tags: ['discovery'],
      params: idParams,
      responses: {
        200: {
          description: 'the decoded certificate',
          schema: z.object({ certificate: certificateDetailsJson, ...chainJson }),
        },
        404: { description: 'unknown id' },
      },
      handle: async ({ params }) => ({
        status: 200,
        body: await services.discovery.certificateDetails(params.id),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/issuers/{id}/chain/details',
      operationId: 'getIssuerChainDetails',
      permission: 'issuer.read',
      summary: "The issuer's CA certificates decoded, issuing CA first (a Local CA is created on first use)",
      tags: ['issuers'],
      params: idParams,
      responses: {
        200: { description: 'the decoded chain', schema: z.object(chainJson) },
        404: { description: 'unknown issuer' },
      },
      handle: async ({ params }) => ({
        status: 200,
        body: await services.pki.lifecycle.caChainDetails(params.id),
      }),
    }),
  ];
}
