import {
  type Handler,
  isCertwrightError,
  type PlainResponse,
  pathnameOf,
  type RequestHead,
} from '@certwright/core';
import {
  buildOcspErrorResponse,
  DEFAULT_OCSP_REQUEST_LIMITS,
  type OcspRequest,
  type OcspRequestLimits,
  parseOcspRequest,
  type RevocationReason,
} from '@certwright/core/pki';
import type { BodyReader, ProtocolEntry } from '../shared/entry.js';
import { withWebHandler } from '../shared/entry.js';
import { accepts, isIssuerId, secondsUntil, segmentsAfter, textResponse } from '../shared/http.js';

/**
 * OCSP responder endpoints (RFC 6960), one responder per issuer, no authentication:
 *
 * - `POST /.well-known/pki/ocsp/{issuer_id}` with a DER OCSPRequest body. A missing
 *   Content-Type is tolerated (some clients omit it); any other explicit type is 415.
 * - `GET /.well-known/pki/ocsp/{issuer_id}/{url-encoded base64 OCSPRequest}` (RFC 6960 A.1);
 *   base64url is accepted too, and unencoded `/` inside the base64 text is tolerated. A GET
 *   request carries at most {@link OCSP_GET_MAX_REQUEST_BYTES} bytes of DER; a longer path is
 *   refused before any decoding.
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
  /**
   * Answers a parsed request for an issuer; null when no such issuer runs an OCSP responder.
   * `encoded` is the request as received, for a source that remembers answers by request bytes.
   */
  respond(issuerId: string, request: OcspRequest, encoded?: Uint8Array): Promise<OcspAnswer | null>;
  /**
   * Optional: the answer the source gave before to these exact request bytes (passed to
   * `respond`), if it still stands; undefined when it has none, null when the issuer is unknown.
   * Only requests without a nonce may be remembered. A hit is answered without parsing.
   */
  knownAnswer?(issuerId: string, encoded: Uint8Array): Promise<OcspAnswer | null | undefined>;
  /** Answers for one serial of the issuer (the `/serial/{hex}` route); null when the issuer is unknown. */
  respondToSerial(issuerId: string, serialHex: string): Promise<OcspAnswer | null>;
  serialStatus(issuerId: string, serialHex: string): Promise<SerialStatus | null>;
}

export interface OcspHandlerOptions {
  source: OcspSource;
  /** Mount path; default `/.well-known/pki/ocsp`. */
  basePath?: string;
  /** Parser limits; default {@link DEFAULT_OCSP_REQUEST_LIMITS} (8 CertIDs, 32-octet nonces). */
  limits?: Partial<OcspRequestLimits>;
  /** DER bytes a GET request may carry; default {@link OCSP_GET_MAX_REQUEST_BYTES}. */
  maxGetRequestBytes?: number;
  /** Clock for Cache-Control computations; default `() => new Date()`. */
  now?: () => Date;
  /** Told about failures answered with internalError/tryLater (the server logs them). */
  onError?: (error: unknown) => void;
}

export const OCSP_BASE_PATH = '/.well-known/pki/ocsp';
const OCSP_RESPONSE = 'application/ocsp-response';
const SERIAL_HEX = /^[0-9a-fA-F]{1,40}$/;

/** An OCSPResponse answer, as written on the wire. */
function ocspPlain(status: number, body: Uint8Array, headers: Record<string, string> = {}): PlainResponse {
  return {
    status,
    headers: { 'content-type': OCSP_RESPONSE, 'content-length': String(body.byteLength), ...headers },
    body,
  };
}

const NO_STORE: Readonly<Record<string, string>> = Object.freeze({ 'cache-control': 'no-store' });

/** A written answer shared by many requests: nobody may change it in passing. */
const frozen = (plain: PlainResponse): PlainResponse => {
  Object.freeze(plain.headers);
  return Object.freeze(plain);
};

const malformedPlain = (status: number): PlainResponse =>
  ocspPlain(status, buildOcspErrorResponse('malformedRequest'));

/** A Content-Type a POSTed request may carry: none (some clients omit it) or application/ocsp-request. */
const isRequestType = (type: string | null): boolean =>
  type === null || type.split(';')[0]!.trim().toLowerCase() === 'application/ocsp-request';

/**
 * The responder's entry (`ProtocolEntry`): every route, for the Web handler and for a host that
 * reads the body itself. `bodyLimit` names the OCSP requests proper (POST and GET), the ones
 * relying parties send again and again; the serial route and the rest are left to the Web path.
 */
export type OcspHandler = Handler & Required<ProtocolEntry>;

/**
 * RFC 5019 §5 has clients use GET only for requests under 255 bytes; 512 bytes hold a
 * SHA-512 CertID with a 20-octet serial and a 32-octet nonce with room to spare. Bigger
 * requests (several CertIDs, signed ones) are POSTed.
 */
export const OCSP_GET_MAX_REQUEST_BYTES = 512;

/**
 * The longest path text that can encode `maxBytes` of DER: 4 base64 characters per 3 bytes,
 * each character at most 3 when percent-encoded. Anything longer is refused unread.
 */
export const maxGetPathLength = (maxBytes: number): number => 3 * 4 * Math.ceil(maxBytes / 3);

/** base64 and base64url sextets by character code; ' ' is a '+' that went through form encoding. */
const SEXTET = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++)
  SEXTET['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.charCodeAt(i)] = i;
SEXTET['-'.charCodeAt(0)] = 62;
SEXTET['_'.charCodeAt(0)] = 63;
SEXTET[' '.charCodeAt(0)] = 62;
const PAD = '='.charCodeAt(0);
const PERCENT = '%'.charCodeAt(0);

const hexDigit = (c: number): number =>
  c >= 0x30 && c <= 0x39
    ? c - 0x30
    : c >= 0x41 && c <= 0x46
      ? c - 0x37
      : c >= 0x61 && c <= 0x66
        ? c - 0x57
        : -1;

/**
 * Decodes the GET path form (percent-encoding, then base64 or base64url, padding optional) in
 * one pass that reads each character once, so the cost is linear in the path whatever it
 * holds; a path longer than {@link maxGetPathLength} is refused before the first read. Null
 * when the text is not a request of at most `maxBytes` bytes.
 */
export function decodeGetRequest(encoded: string, maxBytes: number): Uint8Array | null {
  const length = encoded.length;
  if (length === 0 || length > maxGetPathLength(maxBytes)) return null;
  const out = Buffer.alloc(Math.ceil((length * 3) / 4));
  let bytes = 0;
  let sextets = 0;
  let padding = 0;
  let acc = 0;
  for (let i = 0; i < length; i++) {
    let c = encoded.charCodeAt(i);
    if (c === PERCENT) {
      if (i + 2 >= length) return null;
      const hi = hexDigit(encoded.charCodeAt(++i));
      const lo = hexDigit(encoded.charCodeAt(++i));
      if (hi < 0 || lo < 0) return null;
      c = hi * 16 + lo;
    }
    if (c === PAD) {
      // At most two, only at the end, and only where a quantum is short.
      if (++padding > 2) return null;
      continue;
    }
    const v = c < 128 ? SEXTET[c]! : -1;
    if (v < 0 || padding > 0) return null;
    acc = (acc << 6) | v;
    if (++sextets % 4 === 0) {
      out[bytes++] = (acc >> 16) & 0xff;
      out[bytes++] = (acc >> 8) & 0xff;
      out[bytes++] = acc & 0xff;
      acc = 0;
    }
  }
  const rest = sextets % 4;
  if (rest === 1 || (padding > 0 && rest + padding !== 4)) return null;
  if (rest === 2) out[bytes++] = (acc >> 4) & 0xff;
  if (rest === 3) {
    out[bytes++] = (acc >> 10) & 0xff;
    out[bytes++] = (acc >> 2) & 0xff;
  }
  return bytes === 0 || bytes > maxBytes ? null : out.subarray(0, bytes);
}

export function createOcspHandler(options: OcspHandlerOptions): OcspHandler {
  const basePath = (options.basePath ?? OCSP_BASE_PATH).replace(/\/+$/, '');
  const limits: OcspRequestLimits = { ...DEFAULT_OCSP_REQUEST_LIMITS, ...options.limits };
  const maxGetBytes = Math.min(options.maxGetRequestBytes ?? OCSP_GET_MAX_REQUEST_BYTES, limits.maxBytes);
  const now = options.now ?? (() => new Date());
  const { source } = options;

  /**
   * The written form of answers given again and again (requests without nonce): built once per
   * answer, and for GET once per max-age value, then shared (frozen) by every request it
   * answers. Weak: an answer the source dropped takes its written form with it.
   */
  const written = new WeakMap<OcspAnswer, PlainResponse>();
  const writtenForGet = new WeakMap<OcspAnswer, { maxAge: number; plain: PlainResponse }>();

  /**
   * `fresh`: an answer to a request with a nonce, signed for it alone (`no-store`, not kept).
   * `post`: a reusable answer that HTTP caches must not keep (RFC 5019 §6 speaks of GET only).
   * `get`: a reusable answer HTTP caches may keep until its nextUpdate.
   */
  const answer = (
    result: OcspAnswer | null,
    issuerId: string,
    use: 'fresh' | 'post' | 'get',
  ): PlainResponse => {
    if (!result) {
      // RFC 6960 §2.3: a responder asked about a CA it does not serve answers `unauthorized`.
      return ocspPlain(404, buildOcspErrorResponse('unauthorized'), { 'x-ocsp-issuer': issuerId });
    }
    if (use === 'get' && result.nextUpdate) {
      const maxAge = secondsUntil(result.nextUpdate, now());
      const kept = writtenForGet.get(result);
      if (kept?.maxAge === maxAge) return kept.plain;
      // RFC 5019 §6: GET answers may be cached by HTTP caches until nextUpdate.
      const plain = frozen(
        ocspPlain(200, result.der, {
          'cache-control': `max-age=${maxAge}, public, no-transform, must-revalidate`,
          'last-modified': result.producedAt.toUTCString(),
          expires: result.nextUpdate.toUTCString(),
        }),
      );
      writtenForGet.set(result, { maxAge, plain });
      return plain;
    }
    if (use === 'fresh') return ocspPlain(200, result.der, NO_STORE);
    let plain = written.get(result);
    if (!plain) {
      plain = frozen(ocspPlain(200, result.der, NO_STORE));
      written.set(result, plain);
    }
    return plain;
  };

  /** A failure of the source, answered as OCSP clients expect (RFC 6960 §2.3). */
  const failed = (error: unknown): PlainResponse => {
    options.onError?.(error);
    const busy = isCertwrightError(error) && error.code === 'unavailable';
    return ocspPlain(busy ? 503 : 500, buildOcspErrorResponse(busy ? 'tryLater' : 'internalError'));
  };

  /**
   * Answers the DER request `der`; `cacheable` for GET, whose answers HTTP caches may keep. A
   * request the source answered before (same bytes, no nonce) is answered without parsing.
   */
  const handleParsed = async (
    issuerId: string,
    der: Uint8Array,
    cacheable: boolean,
  ): Promise<PlainResponse> => {
    if (source.knownAnswer) {
      try {
        const known = await source.knownAnswer(issuerId, der);
        if (known !== undefined) return answer(known, issuerId, cacheable ? 'get' : 'post');
      } catch (error) {
        return failed(error);
      }
    }
    let parsed: OcspRequest;
    try {
      parsed = parseOcspRequest(der, limits);
    } catch (error) {
      // Every parse failure is a bad_request (whatever its reason): RFC 6960 malformedRequest.
      if (isCertwrightError(error) && error.code === 'bad_request') return malformedPlain(400);
      return failed(error);
    }
    try {
      // A request with a nonce gets a response no one else may reuse.
      const use = parsed.nonce ? 'fresh' : cacheable ? 'get' : 'post';
      return answer(await source.respond(issuerId, parsed, der), issuerId, use);
    } catch (error) {
      return failed(error);
    }
  };

  /** GET `{issuer}/{encoded request}`: the DER request from the path. */
  const handleGet = (issuerId: string, rest: readonly string[]): Promise<PlainResponse> => {
    // Unencoded '/' in base64 splits the path; join the pieces back (RFC 6960 A.1 clients vary).
    const der = decodeGetRequest(rest.join('/'), maxGetBytes);
    return der ? handleParsed(issuerId, der, true) : Promise.resolve(malformedPlain(400));
  };

  /** The serial route is `{issuer}/serial/{hex}`; every other longer path is a GET request. */
  const isSerialRoute = (rest: readonly string[]) => rest[0] === 'serial' && rest.length === 2;

  const bodyLimit = (
    method: string,
    pathname: string,
    headers?: RequestHead['headers'],
  ): number | undefined => {
    const segments = segmentsAfter(pathname, basePath);
    if (!segments || segments.length === 0) return undefined;
    if (method === 'POST' && segments.length === 1) {
      // The Web path answers the 415 of another type.
      return headers && !isRequestType(headers.get('content-type')) ? undefined : limits.maxBytes;
    }
    if (method === 'GET' && segments.length > 1 && !isSerialRoute(segments.slice(1))) return 0;
    return undefined;
  };

  const route = async (request: RequestHead, readBody: BodyReader): Promise<PlainResponse | Response> => {
    const segments = segmentsAfter(pathnameOf(request), basePath);
    if (!segments || segments.length === 0 || !isIssuerId(segments[0]!)) {
      return textResponse(404, 'no such OCSP responder');
    }
    const issuerId = segments[0]!;
    const rest = segments.slice(1);

    if (rest.length === 0) {
      if (request.method !== 'POST') {
        return textResponse(405, `${request.method} is not allowed here`, { allow: 'POST' });
      }
      if (!isRequestType(request.headers.get('content-type'))) {
        return textResponse(415, 'Content-Type must be application/ocsp-request', {
          accept: 'application/ocsp-request',
        });
      }
      let body: Uint8Array;
      try {
        body = await readBody(limits.maxBytes);
      } catch (error) {
        if (isCertwrightError(error) && error.code === 'payload_too_large') return malformedPlain(413);
        throw error;
      }
      if (body.length === 0) return malformedPlain(400);
      return handleParsed(issuerId, body, false);
    }

    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return textResponse(405, `${request.method} is not allowed here`, { allow: 'GET, HEAD' });
    }
    if (isSerialRoute(rest)) {
      const hex = rest[1]!;
      if (!SERIAL_HEX.test(hex)) return textResponse(400, 'the serial must be 1 to 40 hex digits');
      if (accepts(request, OCSP_RESPONSE)) {
        return answer(await source.respondToSerial(issuerId, hex.toLowerCase()), issuerId, 'get');
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
    return handleGet(issuerId, rest);
  };

  return withWebHandler({
    bodyLimit,
    async answer(head, readBody) {
      try {
        return await route(head, readBody);
      } catch (error) {
        return failed(error);
      }
    },
  });
}
