import { type Handler, pathnameOf, type RequestHead } from '@certwright/core';
import { type ProtocolEntry, withWebHandler } from '../shared/entry.js';
import { binaryResponse, isIssuerId, pathSegments, segmentsAfter, textResponse } from '../shared/http.js';
import type { ProtocolMount } from '../shared/mount.js';
import { issuerIdParam, PKI_ACCESS, REVOCATION_STATUS_TAG } from './mount.js';

/**
 * `GET /.well-known/pki/ca/{issuer_id}`: the issuing CA certificate, DER as
 * `application/pkix-cert` (RFC 2585 §4.1), the target of the caIssuers access method in the
 * Authority Information Access of issued certificates (RFC 5280 §4.2.2.1), so a relying
 * party holding only the leaf can build its path. Anonymous, like the CRL.
 */

export interface CaCertificateSource {
  /** The issuer's CA certificate (DER), or null when no issuer with that id signs here. */
  caCertificate(issuerId: string): Promise<{ der: Uint8Array; notAfter: Date } | null>;
}

export const CA_ISSUERS_BASE_PATH = '/.well-known/pki/ca';

/** Its Web handler, and its `ProtocolEntry` for createHandler's mount (GET only: no direct requests). */
export function createCaIssuersHandler(source: CaCertificateSource): Handler & ProtocolEntry {
  return withWebHandler({ answer });

  async function answer(request: RequestHead): Promise<Response> {
    const segments = segmentsAfter(pathnameOf(request), CA_ISSUERS_BASE_PATH);
    if (segments?.length !== 1 || !isIssuerId(segments[0]!)) {
      return textResponse(404, 'no such CA certificate');
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return textResponse(405, `${request.method} is not allowed here`, { allow: 'GET, HEAD' });
    }
    const ca = await source.caCertificate(segments[0]!);
    if (!ca) return textResponse(404, `issuer '${segments[0]}' does not exist or signs nothing here`);
    return binaryResponse(200, ca.der, 'application/pkix-cert', {
      // The CA certificate changes only with a CA rotation; a day of caching is harmless.
      'cache-control': 'public, max-age=86400',
    });
  }
}

export function caIssuersMount({ source }: { source: CaCertificateSource }): ProtocolMount {
  const path = `${CA_ISSUERS_BASE_PATH}/{issuer_id}`;
  return {
    prefix: CA_ISSUERS_BASE_PATH,
    route: path,
    answer: createCaIssuersHandler(source).answer,
    public: { ...PKI_ACCESS, why: 'relying parties fetch the issuing CA certificate anonymously' },
    operations: {
      [path]: {
        get: {
          operationId: 'getCaIssuerCertificate',
          summary: 'The issuing CA certificate, DER (RFC 2585), as named by caIssuers in issued certificates',
          tags: [REVOCATION_STATUS_TAG],
          parameters: [issuerIdParam],
          responses: {
            200: { description: 'the CA certificate', content: { 'application/pkix-cert': {} } },
            404: {
              description: 'unknown issuer, or one the service does not sign for',
              content: { 'text/plain': {} },
            },
            429: {
              description: 'this client exceeded its rate limit',
              content: { 'text/plain': {} },
              headers: {
                'Retry-After': {
                  description: 'seconds until the client may retry',
                  schema: { type: 'integer' },
                },
              },
            },
          },
        },
      },
    },
    operationOf: (request) =>
      (request.method === 'GET' || request.method === 'HEAD') &&
      pathSegments(request, CA_ISSUERS_BASE_PATH).length === 1
        ? 'getCaIssuerCertificate'
        : undefined,
  };
}
