import { type Handler, isCertwrightError, readBodyBytes } from '@certwright/core';
import {
  buildOcspErrorResponse,
  DEFAULT_OCSP_REQUEST_LIMITS,
  type OcspRequest,
  type OcspRequestLimits,
  parseOcspRequest,
  type RevocationReason,
} from '@certwright/core/pki';
import {
  accepts,
  binaryResponse,
  isIssuerId,
  secondsUntil,
  segmentsAfter,
  textResponse,
} from '../shared/http.js';

/**
 * OCSP responder endpoints (RFC 6960), one responder per issuer, no authentication:
 *
 * - `POST /.well-known/pki/ocsp/{issuer_id}` with a DER OCSPRequest body. A missing
 *   Content-Type is tolerated (some clients omit it); any other explicit type is 415.
 * - `GET /.well-known/pki/ocsp/{issuer_id}/{url-encoded base64 OCSPRequest}` (RFC 6960 A.1);
 *   base64url is accepted too, and unencoded `/` inside the base64 text is tolerated.
 * - `GET /.well-known/pki/ocsp/{issuer_id}/serial/{hex}` for humans: JSON status of one
 *   serial, or a signed OCSP response when asked with `Accept: application/ocsp-response`.
 *
 * Unparsable requests get HTTP 400 with a `malformedRequest` OCSPResponse body, so OCSP
 * clients still read a protocol answer. Signing, status lookups and response caching belong
 * to the source (core's revocation-status service).
 */

export interface OcspAnswer {
  /** A DER OCSPResponse. */
  der: Uint8Array;
  producedAt: Date;
  /** The earliest nextUpdate among the single responses, for HTTP caching of GET answers. */
  nextUpdate?: Date;
}

export interface SerialStatus {
  serial: string;
  status: 'good' | 'revoked' | 'unknown';
  revokedAt?: Date;
  reason?: RevocationReason;
  thisUpdate: Date;
  nextUpdate: Date;
}

export interface OcspSource {
  /** Answers a parsed request for an issuer; null when no such issuer runs an OCSP responder. */
  respond(issuerId: string, request: OcspRequest): Promise<OcspAnswer | null>;
  /** Answers for one serial of the issuer (the `/serial/{hex}` route); null when the issuer is unknown. */
  respondToSerial(issuerId: string, serialHex: string): Promise<OcspAnswer | null>;
  serialStatus(issuerId: string, serialHex: string): Promise<SerialStatus | null>;
}

export interface OcspHandlerOptions {
  source: OcspSource;
  /** Mount path; default `/.well-known/pki/ocsp`. */
  basePath?: string;
  limits?: OcspRequestLimits;
  /** Clock for Cache-Control computations; default `() => new Date()`. */
  now?: () => Date;
  /** Told about failures answered with internalError/tryLater (the server logs them). */
  onError?: (error: unknown) => void;
}

export const OCSP_BASE_PATH = '/.well-known/pki/ocsp';
const OCSP_RESPONSE = 'application/ocsp-response';
const SERIAL_HEX = /^[0-9a-fA-F]{1,40}$/;

function malformed(status: number): Response {
  return binaryResponse(status, buildOcspErrorResponse('malformedRequest'), OCSP_RESPONSE);
}

/** Decodes the GET path form: URL-decoding first, then base64 or base64url. Null when invalid. */
export function decodeGetRequest(encoded: string, maxBytes: number): Uint8Array | null {
  if (encoded.length > Math.ceil((maxBytes * 4) / 3) * 3 + 16) return null;
  let text: string;
  try {
    text = decodeURIComponent(encoded);
  } catch {
    return null;
  }
  // Some clients put '+' through form encoding as a space.
  text = text.replace(/ /g, '+').replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
  if (!/^[A-Za-z0-9+/]*$/.test(text) || text.length % 4 === 1) return null;
  const der = Buffer.from(text, 'base64');
  return der.length === 0 || der.length > maxBytes ? null : der;
}

export function createOcspHandler(options: OcspHandlerOptions): Handler {
  const basePath = (options.basePath ?? OCSP_BASE_PATH).replace(/\/+$/, '');
  const limits = options.limits ?? DEFAULT_OCSP_REQUEST_LIMITS;
  const now = options.now ?? (() => new Date());
  const { source } = options;

  const answer = (result: OcspAnswer | null, issuerId: string, cacheable: boolean): Response => {
    if (!result) {
      // RFC 6960 §2.3: a responder asked about a CA it does not serve answers `unauthorized`.
      return binaryResponse(404, buildOcspErrorResponse('unauthorized'), OCSP_RESPONSE, {
        'x-ocsp-issuer': issuerId,
      });
    }
    const headers: Record<string, string> = {};
    if (cacheable && result.nextUpdate) {
      // RFC 5019 §6: GET answers may be cached by HTTP caches until nextUpdate.
      headers['cache-control'] =
        `max-age=${secondsUntil(result.nextUpdate, now())}, public, no-transform, must-revalidate`;
      headers['last-modified'] = result.producedAt.toUTCString();
      headers.expires = result.nextUpdate.toUTCString();
    } else {
      headers['cache-control'] = 'no-store';
    }
    return binaryResponse(200, result.der, OCSP_RESPONSE, headers);
  };

  const handleParsed = async (issuerId: string, der: Uint8Array, cacheable: boolean): Promise<Response> => {
    let parsed: OcspRequest;
    try {
      parsed = parseOcspRequest(der, limits);
    } catch (error) {
      // Every parse failure is a bad_request (whatever its reason): RFC 6960 malformedRequest.
      if (isCertwrightError(error) && error.code === 'bad_request') return malformed(400);
      throw error;
    }
    // A request with a nonce gets a response no one else may reuse.
    return answer(await source.respond(issuerId, parsed), issuerId, cacheable && !parsed.nonce);
  };

  const route = async (request: Request): Promise<Response> => {
    const segments = segmentsAfter(new URL(request.url).pathname, basePath);
    if (!segments || segments.length === 0 || !isIssuerId(segments[0]!)) {
      return textResponse(404, 'no such OCSP responder');
    }
    const issuerId = segments[0]!;
    const rest = segments.slice(1);

    if (rest.length === 0) {
      if (request.method !== 'POST') {
        return textResponse(405, `${request.method} is not allowed here`, { allow: 'POST' });
      }
      const type = request.headers.get('content-type');
      if (type !== null && type.split(';')[0]!.trim().toLowerCase() !== 'application/ocsp-request') {
        return textResponse(415, 'Content-Type must be application/ocsp-request', {
          accept: 'application/ocsp-request',
        });
      }
      let body: Uint8Array;
      try {
        body = await readBodyBytes(request, limits.maxBytes);
      } catch (error) {
        if (isCertwrightError(error) && error.code === 'payload_too_large') return malformed(413);
        throw error;
      }
      if (body.length === 0) return malformed(400);
      return handleParsed(issuerId, body, false);
    }

    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return textResponse(405, `${request.method} is not allowed here`, { allow: 'GET, HEAD' });
    }
    if (rest[0] === 'serial' && rest.length === 2) {
      const hex = rest[1]!;
      if (!SERIAL_HEX.test(hex)) return textResponse(400, 'the serial must be 1 to 40 hex digits');
      if (accepts(request, OCSP_RESPONSE)) {
        return answer(await source.respondToSerial(issuerId, hex.toLowerCase()), issuerId, true);
      }
      const status = await source.serialStatus(issuerId, hex.toLowerCase());
      if (!status) return textResponse(404, `issuer '${issuerId}' does not exist or runs no OCSP responder`);
      return new Response(
        JSON.stringify({
          issuer_id: issuerId,
          serial: status.serial,
          status: status.status,
          ...(status.revokedAt ? { revoked_at: status.revokedAt.toISOString() } : {}),
          ...(status.reason ? { reason: status.reason } : {}),
          this_update: status.thisUpdate.toISOString(),
          next_update: status.nextUpdate.toISOString(),
        }),
        { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } },
      );
    }
    // Unencoded '/' in base64 splits the path; join the pieces back (RFC 6960 A.1 clients vary).
    const der = decodeGetRequest(rest.join('/'), limits.maxBytes);
    if (!der) return malformed(400);
    return handleParsed(issuerId, der, true);
  };

  return async (request) => {
    try {
      const response = await route(request);
      return request.method === 'HEAD'
        ? new Response(null, { status: response.status, headers: response.headers })
        : response;
    } catch (error) {
      options.onError?.(error);
      // OCSP clients expect an OCSPResponse even on failure (RFC 6960 §2.3).
      const busy = isCertwrightError(error) && error.code === 'unavailable';
      return binaryResponse(
        busy ? 503 : 500,
        buildOcspErrorResponse(busy ? 'tryLater' : 'internalError'),
        OCSP_RESPONSE,
      );
    }
  };
}
