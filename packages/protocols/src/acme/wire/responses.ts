import type { PlainResponse } from '@certwright/core';

/**
 * Answers of ACME endpoints, as plain status, headers and bytes: the server's listener writes
 * them as they are (docs/architecture.md, "Direct path"), the Web handler makes a Response of
 * them. The handler adds `Replay-Nonce`, `Link: <directory>;rel="index"` and
 * `Cache-Control: no-store` to each of them afterwards, so endpoints only say what is theirs:
 * the status, the body, `Location`, further `Link`s and `Retry-After`.
 */

export interface AcmeLink {
  url: string;
  rel: string;
}

export interface AcmeResponseOptions {
  status?: number;
  /** The resource's URL (RFC 8555 §7.3, §7.4: new accounts, orders). */
  location?: string;
  /** Extra links (`up`, `alternate`, `terms-of-service` …); `index` is added for every answer. */
  links?: readonly AcmeLink[];
  /** Seconds until the client should poll again (RFC 8555 §7.5.1, §8.2). */
  retryAfter?: number;
  headers?: Record<string, string>;
}

function headersOf(options: AcmeResponseOptions, contentType?: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
  if (contentType) headers['content-type'] = contentType;
  if (options.location) headers.location = options.location;
  for (const link of options.links ?? []) appendLink(headers, link);
  if (options.retryAfter !== undefined)
    headers['retry-after'] = String(Math.max(0, Math.ceil(options.retryAfter)));
  return headers;
}

export const formatLink = (link: AcmeLink): string => `<${link.url}>;rel="${link.rel}"`;

/** Adds a Link value the way `Headers.append` joins them: one field, values separated by ', '. */
export function appendLink(headers: Record<string, string>, link: AcmeLink): void {
  const value = formatLink(link);
  headers.link = headers.link === undefined ? value : `${headers.link}, ${value}`;
}

const EMPTY = new Uint8Array(0);

/**
 * A body whose length is known is sent with `Content-Length`: the host then writes headers and
 * body at once, without chunked framing and the separate write of its last chunk.
 */
export function sized(body: Uint8Array, status: number, headers: Record<string, string>): PlainResponse {
  headers['content-length'] = String(body.byteLength);
  return { status, headers, body };
}

const utf8 = new TextEncoder();

/** A JSON resource (status 200 unless given). */
export function acmeJson(body: unknown, options: AcmeResponseOptions = {}): PlainResponse {
  return sized(
    utf8.encode(JSON.stringify(body)),
    options.status ?? 200,
    headersOf(options, 'application/json'),
  );
}

/**
 * A bodyless answer (new-nonce, 204s). Other than a 204 (which never carries a length, RFC 9110
 * §8.6) it says `Content-Length: 0`: without a length, Node's HTTP client cannot reuse the
 * connection after a HEAD answer, so every HEAD new-nonce would cost a new TLS handshake.
 */
export function acmeEmpty(status: number, options: AcmeResponseOptions = {}): PlainResponse {
  const headers = headersOf(options);
  if (status !== 204 && status !== 304) headers['content-length'] = '0';
  return { status, headers, body: EMPTY };
}

/** Any other body (the PEM certificate chain of `cert/{id}`). */
export function acmeBody(
  body: Uint8Array | string,
  contentType: string,
  options: AcmeResponseOptions = {},
): PlainResponse {
  const bytes = typeof body === 'string' ? utf8.encode(body) : new Uint8Array(body);
  return sized(bytes, options.status ?? 200, headersOf(options, contentType));
}

/**
 * The Web form of a plain answer. A 204 or 304 carries no body; any other empty one is an empty
 * body stream, as `new Response(null)` was before (the host writes no chunked framing for it).
 */
export function toWebResponse(answer: PlainResponse): Response {
  const nullBody = answer.status === 204 || answer.status === 304 || answer.body.byteLength === 0;
  return new Response(nullBody ? null : (answer.body as Uint8Array<ArrayBuffer>), {
    status: answer.status,
    headers: answer.headers,
  });
}
