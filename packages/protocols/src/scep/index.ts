import {
  type Handler,
  isCertwrightError,
  publicMessage,
  readBodyBytes,
  type ScepClient,
  type ScepOperationResult,
  type TransportContext,
} from '@certwright/core';
import { buildCertRep, buildCertsOnly, type ScepFailInfo } from '@certwright/core/pki';
import { binaryResponse, segmentsAfter, textResponse } from '../shared/http.js';
import type { ScepAuthority } from './authority.js';
import { scepFailInfo } from './fail-info.js';

export type { ScepAuthority } from './authority.js';
export { type ScepHttpFailure, scepFailInfo } from './fail-info.js';

/**
 * The SCEP server (RFC 8894) as one Web-standard handler:
 *
 * - `GET ?operation=GetCACaps`, `GET ?operation=GetCACert`, `GET ?operation=PKIOperation&message=…`
 *   (base64, for old clients) and `POST ?operation=PKIOperation` (DER body), on `{basePath}`,
 *   `{basePath}/` (the default profile) and `{basePath}/{path_id}`.
 * - `mtls: true` makes it the mutual-TLS sibling (`/scep-mtls`): PKIOperation needs a TLS
 *   client certificate that chains to the profile's trust bundle.
 *
 * Verification, authentication, issuance and audit belong to the authority (core's
 * `ScepService`); this layer reads the request, maps a refusal to its failInfo and signs the
 * CertRep with the RA. docs/protocols/scep.md is the contract.
 */
export interface ScepHandlerOptions {
  authority: ScepAuthority;
  /** Mount path; default `/scep` (or `/scep-mtls` with `mtls`). */
  basePath?: string;
  mtls?: boolean;
  /** Largest PKIMessage read; default {@link SCEP_MAX_BODY_BYTES}. */
  maxBodyBytes?: number;
  /** Told about failures answered with 5xx (the server logs them). */
  onError?: (error: unknown) => void;
  /** Told about every FAILURE CertRep with its internal reason (logs; never sent to the client). */
  onRefused?: (result: ScepOperationResult) => void;
}

export const SCEP_BASE_PATH = '/scep';
export const SCEP_MTLS_BASE_PATH = '/scep-mtls';
/** A PKIMessage is 2–10 KiB; 256 KiB leaves room for long chains and refuses anything bigger unread. */
export const SCEP_MAX_BODY_BYTES = 256 * 1024;

export const SCEP_PKI_MESSAGE = 'application/x-pki-message';
export const SCEP_CA_CERT = 'application/x-x509-ca-cert';
export const SCEP_CA_RA_CERT = 'application/x-x509-ca-ra-cert';

const PATH_ID = /^[a-z0-9][a-z0-9._-]{0,63}$/;
export const SCEP_OPERATIONS = ['GetCACaps', 'GetCACert', 'PKIOperation'] as const;
export type ScepOperation = (typeof SCEP_OPERATIONS)[number];

/** Which profile a path names: `[]` (default profile) or `[path_id]`; null for anything else. */
export function parseScepPath(segments: readonly string[]): { pathId: string | null } | null {
  if (segments.length === 0) return { pathId: null };
  if (segments.length === 1 && PATH_ID.test(segments[0]!)) return { pathId: segments[0]! };
  return null;
}

const isOperation = (s: string | null): s is ScepOperation =>
  s !== null && (SCEP_OPERATIONS as readonly string[]).includes(s);

/** The base64 `message` of a GET PKIOperation; a `+` that arrived unescaped reads as a space. */
function messageParameter(url: URL, maxBytes: number): Uint8Array | null {
  const text = url.searchParams.get('message');
  if (text === null || text.length > Math.ceil((maxBytes * 4) / 3) + 16) return null;
  const b64 = text.replace(/ /g, '+').replace(/[\r\n]/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(b64)) return null;
  return Buffer.from(b64.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

export function createScepHandler(options: ScepHandlerOptions): Handler {
  const mtls = options.mtls ?? false;
  const basePath = (options.basePath ?? (mtls ? SCEP_MTLS_BASE_PATH : SCEP_BASE_PATH)).replace(/\/+$/, '');
  const maxBodyBytes = options.maxBodyBytes ?? SCEP_MAX_BODY_BYTES;
  const { authority } = options;

  const route = async (request: Request, transport: TransportContext): Promise<Response> => {
    const url = new URL(request.url);
    const segments = segmentsAfter(url.pathname, basePath);
    const target = segments ? parseScepPath(segments) : null;
    if (!target) return textResponse(404, 'no such SCEP resource');
    if (request.method !== 'GET' && request.method !== 'HEAD' && request.method !== 'POST') {
      return textResponse(405, `${request.method} is not allowed here`, { allow: 'GET, HEAD, POST' });
    }
    const operation = url.searchParams.get('operation');
    if (!isOperation(operation)) {
      return textResponse(400, 'the operation parameter must be GetCACaps, GetCACert or PKIOperation');
    }
    const { pathId } = target;
    if (operation !== 'PKIOperation') {
      if (request.method === 'POST') {
        return textResponse(405, `${operation} is a GET operation`, { allow: 'GET, HEAD' });
      }
      if (operation === 'GetCACaps') {
        const caps = Buffer.from(`${(await authority.capabilities(pathId)).join('\n')}\n`);
        // With its length: the reply goes out in one write, not as chunks and a terminating chunk.
        return new Response(caps, {
          status: 200,
          headers: {
            'content-type': 'text/plain; charset=utf-8',
            'content-length': String(caps.length),
            'cache-control': 'no-store',
          },
        });
      }
      if (authority.caCertificatesMessage) {
        const message = await authority.caCertificatesMessage(pathId);
        return binaryResponse(200, message, SCEP_CA_RA_CERT, { 'cache-control': 'no-store' });
      }
      const { ca, ra } = await authority.caCertificates(pathId);
      // RFC 8894 §4.2.1: one CA alone is its DER; with an RA, a certificates-only CMS.
      return ra
        ? binaryResponse(200, buildCertsOnly([...ca, ra]), SCEP_CA_RA_CERT, { 'cache-control': 'no-store' })
        : binaryResponse(200, ca[0]!, SCEP_CA_CERT, { 'cache-control': 'no-store' });
    }
    let body: Uint8Array;
    if (request.method === 'POST') body = await readBodyBytes(request, maxBodyBytes);
    else {
      const message = messageParameter(url, maxBodyBytes);
      if (!message || message.length === 0) {
        return textResponse(400, 'GET PKIOperation needs a base64 message parameter');
      }
      body = message;
    }
    const client: ScepClient = {
      remoteAddress: transport.remoteAddress,
      mtls,
      clientCertificateChain: transport.tls?.clientCertificateChain ?? [],
    };
    const result = await authority.pkiOperation(pathId, client, body);
    let answer:
      | { status: 'SUCCESS'; certificates: Uint8Array[]; recipient: Uint8Array }
      | { status: 'FAILURE'; failInfo: ScepFailInfo };
    if (result.outcome.status === 'SUCCESS') {
      answer = { status: 'SUCCESS', certificates: result.outcome.certificates, recipient: result.requester };
    } else {
      options.onRefused?.(result);
      const mapped = scepFailInfo(result.outcome.reason);
      if (typeof mapped !== 'string') {
        return textResponse(mapped.http, mapped.http === 500 ? 'internal error' : result.outcome.message, {
          'cache-control': 'no-store',
          ...(mapped.http === 503 ? { 'retry-after': '30' } : {}),
        });
      }
      answer = { status: 'FAILURE', failInfo: mapped };
    }
    const certRep = buildCertRep({
      ra: { certificate: result.ra.certificate, privateKey: result.ra.privateKey },
      transactionId: result.transactionId,
      recipientNonce: result.recipientNonce,
      senderNonce: result.senderNonce,
      digest: result.digest,
      result: answer,
    });
    return binaryResponse(200, certRep, SCEP_PKI_MESSAGE, { 'cache-control': 'no-store' });
  };

  return async (request, transport) => {
    let response: Response;
    try {
      response = await route(request, transport);
    } catch (error) {
      response = failure(error, options.onError);
    }
    return request.method === 'HEAD'
      ? new Response(null, { status: response.status, headers: response.headers })
      : response;
  };
}

/**
 * Errors before a CertRep can be formed: the HTTP status of the reason's SCEP mapping where it
 * has one (413, 503, 500), else by the error's family — 400 for a body that is no PKIMessage,
 * 403 for a refused client certificate, 404 for an unknown profile.
 */
function failure(error: unknown, onError?: (error: unknown) => void): Response {
  const mapped = isCertwrightError(error) ? scepFailInfo(error.reason) : { http: 500 as const };
  const code = isCertwrightError(error) ? error.code : 'internal';
  const status =
    typeof mapped !== 'string'
      ? mapped.http
      : code === 'not_found'
        ? 404
        : code === 'forbidden' || code === 'unauthorized'
          ? 403
          : 400;
  if (status >= 500) onError?.(error);
  return textResponse(status, status === 500 ? 'internal error' : publicMessage(error), {
    'cache-control': 'no-store',
    ...(status === 503 ? { 'retry-after': '30' } : {}),
  });
}
