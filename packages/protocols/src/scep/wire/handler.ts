import {
  type Handler,
  isCertwrightError,
  type PlainResponse,
  publicMessage,
  type TransportContext,
} from '@certwright/core';
import { buildCertRep, buildCertsOnly, type ScepFailInfo } from '@certwright/core/pki';
import { type ProtocolEntry, withWebHandler } from '../../shared/entry.js';
import { segmentsAfter } from '../../shared/http.js';
import type { ScepClient, ScepOperationResult } from '../server/service.js';
import type { ScepAuthority } from './authority.js';
import { scepFailInfo } from './fail-info.js';

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

/**
 * The server's entry (`ProtocolEntry`): every request, for the Web handler and for a host that
 * reads the body itself. `bodyLimit` names GET and POST on a profile's route; HEAD, other
 * methods and paths outside a profile are left to the Web path.
 */
export type ScepHandler = Handler & Required<ProtocolEntry>;

const NO_STORE: Readonly<Record<string, string>> = Object.freeze({ 'cache-control': 'no-store' });

function plain(
  status: number,
  body: Uint8Array,
  contentType: string,
  headers: Record<string, string> = {},
): PlainResponse {
  return {
    status,
    headers: { 'content-type': contentType, 'content-length': String(body.byteLength), ...headers },
    body,
  };
}

const plainText = (status: number, text: string, headers: Record<string, string> = {}): PlainResponse =>
  plain(status, Buffer.from(`${text}\n`), 'text/plain; charset=utf-8', headers);

/** GetCACaps' reply per capability list (the authority returns the same list every time). */
const capsBodies = new WeakMap<readonly string[], Buffer>();

export function createScepHandler(options: ScepHandlerOptions): ScepHandler {
  const mtls = options.mtls ?? false;
  const basePath = (options.basePath ?? (mtls ? SCEP_MTLS_BASE_PATH : SCEP_BASE_PATH)).replace(/\/+$/, '');
  const maxBodyBytes = options.maxBodyBytes ?? SCEP_MAX_BODY_BYTES;
  const { authority } = options;

  const target = (pathname: string) => {
    const segments = segmentsAfter(pathname, basePath);
    return segments ? parseScepPath(segments) : null;
  };

  /**
   * One request on a profile's route, GET or POST; `body` is the POSTed bytes (null for GET).
   * Throws only what {@link failure} maps.
   */
  const answer = async (
    method: string,
    url: URL,
    pathId: string | null,
    body: Uint8Array | null,
    transport: TransportContext,
  ): Promise<PlainResponse> => {
    const operation = url.searchParams.get('operation');
    if (!isOperation(operation)) {
      return plainText(400, 'the operation parameter must be GetCACaps, GetCACert or PKIOperation');
    }
    if (operation !== 'PKIOperation') {
      if (method === 'POST') {
        return plainText(405, `${operation} is a GET operation`, { allow: 'GET, HEAD' });
      }
      if (operation === 'GetCACaps') {
        const list = await authority.capabilities(pathId);
        let caps = capsBodies.get(list);
        if (!caps) {
          caps = Buffer.from(`${list.join('\n')}\n`);
          capsBodies.set(list, caps);
        }
        // With its length: the reply goes out in one write, not as chunks and a terminating chunk.
        return plain(200, caps, 'text/plain; charset=utf-8', NO_STORE);
      }
      if (authority.caCertificatesMessage) {
        return plain(200, await authority.caCertificatesMessage(pathId), SCEP_CA_RA_CERT, NO_STORE);
      }
      const { ca, ra } = await authority.caCertificates(pathId);
      // RFC 8894 §4.2.1: one CA alone is its DER; with an RA, a certificates-only CMS.
      return ra
        ? plain(200, buildCertsOnly([...ca, ra]), SCEP_CA_RA_CERT, NO_STORE)
        : plain(200, ca[0]!, SCEP_CA_CERT, NO_STORE);
    }
    let message: Uint8Array;
    if (body !== null) message = body;
    else {
      const fromQuery = messageParameter(url, maxBodyBytes);
      if (!fromQuery || fromQuery.length === 0) {
        return plainText(400, 'GET PKIOperation needs a base64 message parameter');
      }
      message = fromQuery;
    }
    const client: ScepClient = {
      remoteAddress: transport.remoteAddress,
      mtls,
      clientCertificateChain: transport.tls?.clientCertificateChain ?? [],
    };
    const result = await authority.pkiOperation(pathId, client, message);
    let reply:
      | { status: 'SUCCESS'; certificates: Uint8Array[]; recipient: Uint8Array }
      | { status: 'FAILURE'; failInfo: ScepFailInfo };
    if (result.outcome.status === 'SUCCESS') {
      reply = { status: 'SUCCESS', certificates: result.outcome.certificates, recipient: result.requester };
    } else {
      options.onRefused?.(result);
      const mapped = scepFailInfo(result.outcome.reason);
      if (typeof mapped !== 'string') {
        return plainText(mapped.http, mapped.http === 500 ? 'internal error' : result.outcome.message, {
          ...NO_STORE,
          ...(mapped.http === 503 ? { 'retry-after': String(result.outcome.retryAfterSeconds ?? 30) } : {}),
        });
      }
      reply = { status: 'FAILURE', failInfo: mapped };
    }
    const certRep = buildCertRep({
      ra: { certificate: result.ra.certificate, privateKey: result.ra.privateKey },
      transactionId: result.transactionId,
      recipientNonce: result.recipientNonce,
      senderNonce: result.senderNonce,
      digest: result.digest,
      result: reply,
    });
    return plain(200, certRep, SCEP_PKI_MESSAGE, NO_STORE);
  };

  const guarded = (run: () => Promise<PlainResponse>): Promise<PlainResponse> =>
    run().catch((error: unknown) => failure(error, options.onError));

  return withWebHandler({
    bodyLimit(method, pathname) {
      if (!target(pathname)) return undefined;
      if (method === 'POST') return maxBodyBytes;
      return method === 'GET' ? 0 : undefined;
    },
    answer(head, readBody, transport) {
      return guarded(async () => {
        const url = new URL(head.url);
        const found = target(url.pathname);
        if (!found) return plainText(404, 'no such SCEP resource');
        if (head.method !== 'GET' && head.method !== 'HEAD' && head.method !== 'POST') {
          return plainText(405, `${head.method} is not allowed here`, { allow: 'GET, HEAD, POST' });
        }
        const body = head.method === 'POST' ? await readBody(maxBodyBytes) : null;
        return answer(head.method, url, found.pathId, body, transport);
      });
    },
  });
}

/**
 * Errors before a CertRep can be formed: the HTTP status of the reason's SCEP mapping where it
 * has one (413, 503, 500), else by the error's family — 400 for a body that is no PKIMessage,
 * 403 for a refused client certificate, 404 for an unknown profile.
 */
function failure(error: unknown, onError?: (error: unknown) => void): PlainResponse {
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
  return plainText(status, status === 500 ? 'internal error' : publicMessage(error), {
    ...NO_STORE,
    ...(status === 503 ? { 'retry-after': '30' } : {}),
  });
}
