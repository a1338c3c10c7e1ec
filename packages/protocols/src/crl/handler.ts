import { type Handler, pathnameOf, type RequestHead } from '@certwright/core';
import { crlToPem } from '@certwright/core/pki';
import { type ProtocolEntry, withWebHandler } from '../shared/entry.js';
import { accepts, binaryResponse, isIssuerId, segmentsAfter, textResponse } from '../shared/http.js';

/**
 * `GET /.well-known/pki/crl/{issuer_id}`: the issuer's current CRL (RFC 5280), DER as
 * `application/pkix-crl` (RFC 2585), or PEM (`X509 CRL`) when the client sends
 * `Accept: application/x-pem-file`. No authentication: relying parties fetch it anonymously.
 * `GET /.well-known/pki/crl/{issuer_id}/delta`: its current delta CRL (RFC 5280 §5.2.4), the
 * same way, for issuers that publish deltas.
 *
 * The handler only speaks HTTP. Building, numbering and caching CRLs is the source's job
 * (core's revocation-status service), because revocations must invalidate that cache
 * before the revoke call returns.
 */

export interface CurrentCrl {
  der: Uint8Array;
  crlNumber: bigint;
  thisUpdate: Date;
  nextUpdate: Date;
}

export interface CrlSource {
  /** The issuer's current CRL, or null when no issuer with that id publishes a CRL. */
  currentCrl(issuerId: string): Promise<CurrentCrl | null>;
  /** Its current delta CRL, or null when it publishes none; absent: no deltas anywhere. */
  currentDeltaCrl?(issuerId: string): Promise<CurrentCrl | null>;
}

export interface CrlHandlerOptions {
  source: CrlSource;
  /** Mount path of the handler; default `/.well-known/pki/crl`. */
  basePath?: string;
}

export const CRL_BASE_PATH = '/.well-known/pki/crl';

/** Its Web handler, and its `ProtocolEntry` for createHandler's mount (GET only: no direct requests). */
export function createCrlHandler(options: CrlHandlerOptions): Handler & ProtocolEntry {
  const basePath = (options.basePath ?? CRL_BASE_PATH).replace(/\/+$/, '');
  return withWebHandler({ answer });

  async function answer(request: RequestHead): Promise<Response> {
    const segments = segmentsAfter(pathnameOf(request), basePath);
    const delta = segments?.length === 2 && segments[1] === 'delta';
    if (!segments || !(segments.length === 1 || delta) || !isIssuerId(segments[0]!)) {
      return textResponse(404, 'no such CRL');
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return textResponse(405, `${request.method} is not allowed here`, { allow: 'GET, HEAD' });
    }
    const issuerId = segments[0]!;
    const crl = delta
      ? ((await options.source.currentDeltaCrl?.(issuerId)) ?? null)
      : await options.source.currentCrl(issuerId);
    if (!crl) {
      return textResponse(
        404,
        `issuer '${issuerId}' does not exist or publishes no ${delta ? 'delta CRL' : 'CRL'}`,
      );
    }
    const headers = {
      // Clients may keep it until nextUpdate; revalidating is cheap (304 is not worth the code).
      'cache-control': 'public, no-cache',
      'last-modified': crl.thisUpdate.toUTCString(),
      expires: crl.nextUpdate.toUTCString(),
      etag: `"${crl.crlNumber.toString(16)}"`,
    };
    return accepts(request, 'application/x-pem-file')
      ? binaryResponse(200, Buffer.from(crlToPem(crl.der)), 'application/x-pem-file', headers)
      : binaryResponse(200, crl.der, 'application/pkix-crl', headers);
  }
}
