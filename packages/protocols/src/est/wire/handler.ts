import {
  type Handler,
  isCertwrightError,
  pathnameOf,
  publicMessage,
  type RequestHead,
  type TransportContext,
} from '@certwright/core';
import { type BodyReader, type ProtocolEntry, withWebHandler } from '../../shared/entry.js';
import { segmentsAfter, textResponse } from '../../shared/http.js';
import type { EstClient } from '../server/enrollment.js';
import type { EstAuthority } from './authority.js';
import { cacerts } from './cacerts.js';
import { csrattrs } from './csrattrs.js';
import { basicCredentials } from './encoding.js';
import { serverKeygen } from './serverkeygen.js';
import { simpleEnroll } from './simpleenroll.js';
import { estStatus } from './status.js';

/**
 * The EST server (RFC 7030, RFC 8951) as one Web-standard handler:
 *
 * - `GET cacerts`, `GET csrattrs` (no authentication), `POST simpleenroll`,
 *   `POST simplereenroll`, `POST serverkeygen`, under `{basePath}/` for the default profile
 *   and `{basePath}/{path_id}/` for a profile's path id.
 * - `mtls: true` makes it the mutual-TLS sibling (`/.well-known/est-mtls`): enrollment needs a
 *   TLS client certificate that chains to the profile's trust bundle.
 *
 * Authentication, CSR checks, issuance and audit belong to the authority (core's
 * `EstService`); this layer reads the request, hands over what the connection knows, and
 * writes the wire format. docs/protocols/est.md is the contract.
 */
export interface EstHandlerOptions {
  authority: EstAuthority;
  /** Mount path; default `/.well-known/est` (or `/.well-known/est-mtls` with `mtls`). */
  basePath?: string;
  mtls?: boolean;
  /** Largest request body read; default {@link EST_MAX_BODY_BYTES}. */
  maxBodyBytes?: number;
  /** Realm of the Basic challenge; default `certwright EST`. */
  realm?: string;
  /** Told about failures answered with 5xx (the server logs them). */
  onError?: (error: unknown) => void;
}

export const EST_BASE_PATH = '/.well-known/est';
export const EST_MTLS_BASE_PATH = '/.well-known/est-mtls';

/** A CSR is at most 64 KiB of DER (core's CSR limit); its base64 with line breaks fits in 96 KiB. */
export const EST_MAX_BODY_BYTES = 96 * 1024;

const OPERATIONS = ['cacerts', 'csrattrs', 'simpleenroll', 'simplereenroll', 'serverkeygen'] as const;
type Operation = (typeof OPERATIONS)[number];
const isOperation = (s: string): s is Operation => (OPERATIONS as readonly string[]).includes(s);
const PATH_ID = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** Which profile and operation a path names: `[op]` (default profile) or `[path_id, op]`. */
export function parseEstPath(
  segments: readonly string[],
): { pathId: string | null; operation: Operation } | null {
  if (segments.length === 1 && isOperation(segments[0]!)) return { pathId: null, operation: segments[0] };
  if (segments.length === 2 && PATH_ID.test(segments[0]!) && isOperation(segments[1]!)) {
    return { pathId: segments[0]!, operation: segments[1] };
  }
  return null;
}

/** Its Web handler, and its `ProtocolEntry` for createHandler's mount (no direct requests). */
export function createEstHandler(options: EstHandlerOptions): Handler & ProtocolEntry {
  const mtls = options.mtls ?? false;
  const basePath = (options.basePath ?? (mtls ? EST_MTLS_BASE_PATH : EST_BASE_PATH)).replace(/\/+$/, '');
  const maxBodyBytes = options.maxBodyBytes ?? EST_MAX_BODY_BYTES;
  const realm = (options.realm ?? 'certwright EST').replace(/["\\]/g, '');
  const { authority } = options;

  const clientOf = (request: RequestHead, transport: TransportContext): EstClient => {
    const basic = basicCredentials(request.headers.get('authorization'));
    const tls = transport.tls;
    return {
      remoteAddress: transport.remoteAddress,
      mtls,
      ...(basic ? { basic } : {}),
      clientCertificateChain: tls?.clientCertificateChain ?? [],
      tlsProtocol: tls?.protocol ?? null,
      ...(tls
        ? { exportKeyingMaterial: (length: number, label: string) => tls.exportKeyingMaterial(length, label) }
        : {}),
    };
  };

  const route = async (
    request: RequestHead,
    readBody: BodyReader,
    transport: TransportContext,
  ): Promise<Response> => {
    const segments = segmentsAfter(pathnameOf(request), basePath);
    const target = segments ? parseEstPath(segments) : null;
    if (!target) return textResponse(404, 'no such EST resource');
    const { pathId, operation } = target;
    if (operation === 'cacerts' || operation === 'csrattrs') {
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        return textResponse(405, `${request.method} is not allowed here`, { allow: 'GET, HEAD' });
      }
      return operation === 'cacerts' ? cacerts(authority, pathId) : csrattrs(authority, pathId);
    }
    if (request.method !== 'POST') {
      return textResponse(405, `${request.method} is not allowed here`, { allow: 'POST' });
    }
    const body = await readBody(maxBodyBytes);
    const client = clientOf(request, transport);
    return operation === 'serverkeygen'
      ? serverKeygen(authority, pathId, client, body)
      : simpleEnroll(authority, pathId, operation, client, body);
  };

  return withWebHandler({
    async answer(request, readBody, transport) {
      try {
        return await route(request, readBody, transport);
      } catch (error) {
        return failure(error, realm, options.onError);
      }
    },
  });
}

function failure(error: unknown, realm: string, onError?: (error: unknown) => void): Response {
  const status = isCertwrightError(error) ? estStatus(error.reason) : 500;
  if (status >= 500) onError?.(error);
  if (status === 401) {
    // Some Java EST clients fail on a 401 with a body: none is sent.
    return new Response(null, {
      status: 401,
      headers: { 'www-authenticate': `Basic realm="${realm}", charset="UTF-8"` },
    });
  }
  const headers: Record<string, string> = { 'cache-control': 'no-store' };
  const retryAfter = isCertwrightError(error) ? error.extra.retry_after_seconds : undefined;
  if (typeof retryAfter === 'number') headers['retry-after'] = String(retryAfter);
  if (status === 503 && !headers['retry-after']) headers['retry-after'] = '30';
  return textResponse(
    status,
    status >= 500 && status !== 503 ? 'internal error' : publicMessage(error),
    headers,
  );
}
