import { pathSegments } from '../shared/http.js';
import type { ProtocolMount } from '../shared/mount.js';
import { CRL_BASE_PATH, type CrlSource, createCrlHandler } from './handler.js';

/**
 * The CRL under /.well-known/pki/crl (RFC 5280, RFC 2585): relying parties fetch it
 * anonymously, so the mount is public and spends the `pki` rate limit, like OCSP's.
 */

export interface CrlMountOptions {
  /** The issuers' current CRLs (core's revocation-status service). */
  source: CrlSource;
}

/** CRL and OCSP share one OpenAPI tag, access declaration and issuer parameter. */
export const REVOCATION_STATUS_TAG = 'revocation status';
export const PKI_ACCESS = {
  why: 'relying parties fetch revocation status anonymously',
  rateLimit: 'pki',
} as const;

export const issuerIdParam = {
  name: 'issuer_id',
  in: 'path',
  required: true,
  description: 'the issuer whose CA signed the certificates in question',
  schema: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,128}$' },
};
const text = (description: string) => ({ description, content: { 'text/plain': {} } });
const retryAfter = {
  'Retry-After': { description: 'seconds until the client may retry', schema: { type: 'integer' } },
};

export function crlMount({ source }: CrlMountOptions): ProtocolMount {
  const path = `${CRL_BASE_PATH}/{issuer_id}`;
  return {
    prefix: CRL_BASE_PATH,
    route: path,
    answer: createCrlHandler({ source }).answer,
    public: PKI_ACCESS,
    operations: {
      [path]: {
        get: {
          operationId: 'getCrl',
          summary: "The issuer's current CRL: DER (RFC 2585), or PEM when asked for application/x-pem-file",
          tags: [REVOCATION_STATUS_TAG],
          parameters: [issuerIdParam],
          responses: {
            200: {
              description: 'the CRL; cacheable until nextUpdate (Expires), ETag is the CRL number',
              content: { 'application/pkix-crl': {}, 'application/x-pem-file': {} },
            },
            404: text('unknown issuer, or it publishes no CRL'),
            429: { ...text('this client exceeded its rate limit'), headers: retryAfter },
          },
        },
      },
      [`${path}/delta`]: {
        get: {
          operationId: 'getDeltaCrl',
          summary:
            "The issuer's current delta CRL (RFC 5280 §5.2.4): DER, or PEM when asked for application/x-pem-file",
          tags: [REVOCATION_STATUS_TAG],
          parameters: [issuerIdParam],
          responses: {
            200: {
              description:
                'the delta CRL; its Delta CRL Indicator names the complete CRL it applies to, ETag is its CRL number',
              content: { 'application/pkix-crl': {}, 'application/x-pem-file': {} },
            },
            404: text('unknown issuer, or it publishes no delta CRLs'),
            429: { ...text('this client exceeded its rate limit'), headers: retryAfter },
          },
        },
      },
    },
    operationOf: (request) => {
      if (request.method !== 'GET' && request.method !== 'HEAD') return undefined;
      const segments = pathSegments(request, CRL_BASE_PATH);
      if (segments.length === 1) return 'getCrl';
      return segments.length === 2 && segments[1] === 'delta' ? 'getDeltaCrl' : undefined;
    },
  };
}
