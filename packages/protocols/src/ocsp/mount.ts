import type { Logger } from '@certwright/core';
import { buildOcspErrorResponse, DEFAULT_OCSP_REQUEST_LIMITS } from '@certwright/core/pki';
import { issuerIdParam, PKI_ACCESS, REVOCATION_STATUS_TAG as TAG } from '../crl/mount.js';
import { pathSegments } from '../shared/http.js';
import type { ProtocolMount } from '../shared/mount.js';
import { createOcspHandler, OCSP_BASE_PATH, type OcspSource } from './handler.js';

/**
 * OCSP under /.well-known/pki/ocsp (RFC 6960, RFC 5019): relying parties ask anonymously, so
 * the mount is public and spends the `pki` rate limit, like the CRL's (crl/mount.ts).
 */

export interface OcspMountOptions {
  /** Answers and serial statuses (core's revocation-status service). */
  source: OcspSource;
  now: () => Date;
  /** The host's body limit: requests are held to the smaller of it and the OCSP request limit. */
  maxBodyBytes: number;
  logger: Logger;
}

const text = (description: string) => ({ description, content: { 'text/plain': {} } });
const ocspBody = (description: string) => ({ description, content: { 'application/ocsp-response': {} } });
const retryAfter = {
  'Retry-After': { description: 'seconds until the client may retry', schema: { type: 'integer' } },
};

export function ocspMount({ source, now, maxBodyBytes, logger }: OcspMountOptions): ProtocolMount {
  const base = `${OCSP_BASE_PATH}/{issuer_id}`;
  const status = source;
  const errors = {
    400: ocspBody('malformedRequest: the request could not be parsed'),
    404: {
      description: 'unauthorized (RFC 6960 §2.3): this server runs no OCSP responder for that issuer',
      content: { 'application/ocsp-response': {}, 'text/plain': {} },
    },
    500: ocspBody('internalError'),
    503: { ...ocspBody('tryLater: storage is unavailable'), headers: retryAfter },
  };
  const answered = {
    200: { description: 'a signed OCSPResponse', content: { 'application/ocsp-response': {} } },
    429: {
      ...ocspBody('this client exceeded its rate limit: an unsigned `tryLater` OCSPResponse'),
      headers: retryAfter,
    },
  };
  const handler = createOcspHandler({
    source: status,
    now,
    limits: {
      ...DEFAULT_OCSP_REQUEST_LIMITS,
      maxBytes: Math.min(DEFAULT_OCSP_REQUEST_LIMITS.maxBytes, maxBodyBytes),
    },
    onError: (error) => logger.error({ err: error }, 'OCSP request failed'),
  });
  return {
    prefix: OCSP_BASE_PATH,
    route: base,
    // OCSP requests proper (its bodyLimit) skip the Web Request/Response on the server's own listener.
    answer: handler.answer,
    bodyLimit: handler.bodyLimit,
    public: PKI_ACCESS,
    // HTTP 429 (RFC 6585 §4) with Retry-After, like every other over-limit answer, so load
    // balancers, monitoring and operators see the refusal; the body is the unsigned RFC 6960
    // §2.3 `tryLater` OCSPResponse for the clients that read it whatever the status says.
    rateLimited: (retryAfterSeconds) =>
      new Response(new Uint8Array(buildOcspErrorResponse('tryLater')), {
        status: 429,
        headers: {
          'content-type': 'application/ocsp-response',
          'retry-after': String(retryAfterSeconds),
          'cache-control': 'no-store',
        },
      }),
    operations: {
      [base]: {
        post: {
          operationId: 'postOcspRequest',
          summary: 'OCSP over POST (RFC 6960 A.1): a DER OCSPRequest in the body',
          tags: [TAG],
          parameters: [issuerIdParam],
          requestBody: {
            required: true,
            description: 'a missing Content-Type is tolerated; another explicit type is 415',
            content: { 'application/ocsp-request': {} },
          },
          responses: {
            ...answered,
            ...errors,
            413: ocspBody('malformedRequest: the request is larger than the limit'),
            415: text('the Content-Type is not application/ocsp-request'),
          },
        },
      },
      [`${base}/serial/{serial}`]: {
        get: {
          operationId: 'getOcspSerialStatus',
          summary:
            'Status of one serial for humans: JSON, or a signed OCSPResponse when asked for application/ocsp-response',
          tags: [TAG],
          parameters: [
            issuerIdParam,
            {
              name: 'serial',
              in: 'path',
              required: true,
              description: 'the serial number in hex',
              schema: { type: 'string', pattern: '^[0-9a-fA-F]{1,40}$' },
            },
          ],
          responses: {
            200: {
              description: 'the status',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['issuer_id', 'serial', 'status', 'this_update', 'next_update'],
                    properties: {
                      issuer_id: { type: 'string' },
                      serial: { type: 'string' },
                      status: { type: 'string', enum: ['good', 'revoked', 'unknown'] },
                      revoked_at: { type: 'string', format: 'date-time' },
                      reason: { type: 'string' },
                      this_update: { type: 'string', format: 'date-time' },
                      next_update: { type: 'string', format: 'date-time' },
                    },
                  },
                },
                'application/ocsp-response': {},
              },
            },
            400: text('the serial is not 1 to 40 hex digits'),
            404: {
              description: 'unknown issuer, or it runs no OCSP responder',
              content: { 'text/plain': {}, 'application/ocsp-response': {} },
            },
            429: answered[429],
            500: ocspBody('internalError'),
            503: { ...ocspBody('tryLater: storage is unavailable'), headers: retryAfter },
          },
        },
      },
      [`${base}/{ocsp_request}`]: {
        get: {
          operationId: 'getOcspRequest',
          summary: 'OCSP over GET (RFC 6960 A.1, RFC 5019): the DER OCSPRequest, base64 and URL-encoded',
          tags: [TAG],
          parameters: [
            issuerIdParam,
            {
              name: 'ocsp_request',
              in: 'path',
              required: true,
              description: 'url-encoded base64 (or base64url) of the DER OCSPRequest',
              schema: { type: 'string' },
            },
          ],
          responses: { ...answered, ...errors },
        },
      },
    },
    operationOf: (request) => {
      const parts = pathSegments(request, OCSP_BASE_PATH);
      if (parts.length === 1) return request.method === 'POST' ? 'postOcspRequest' : undefined;
      if (parts.length < 2 || (request.method !== 'GET' && request.method !== 'HEAD')) return undefined;
      return parts[1] === 'serial' && parts.length === 3 ? 'getOcspSerialStatus' : 'getOcspRequest';
    },
  };
}
