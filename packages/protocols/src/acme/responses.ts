/**
 * Answers of ACME endpoints. The handler adds `Replay-Nonce`, `Link: <directory>;rel="index"`
 * and `Cache-Control: no-store` to each of them afterwards, so endpoints only say what is
 * theirs: the status, the body, `Location`, further `Link`s and `Retry-After`.
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

function headersOf(options: AcmeResponseOptions, contentType?: string): Headers {
  const headers = new Headers(options.headers);
  if (contentType) headers.set('content-type', contentType);
  if (options.location) headers.set('location', options.location);
  for (const link of options.links ?? []) headers.append('link', formatLink(link));
  if (options.retryAfter !== undefined)
    headers.set('retry-after', String(Math.max(0, Math.ceil(options.retryAfter))));
  return headers;
}

export const formatLink = (link: AcmeLink): string => `<${link.url}>;rel="${link.rel}"`;

/**
 * A body whose length is known is sent with `Content-Length`: the host then writes headers and
 * body at once, without chunked framing and the separate write of its last chunk.
 */
export function sized(bytes: Uint8Array, status: number, headers: Headers): Response {
  headers.set('content-length', String(bytes.byteLength));
  return new Response(bytes as Uint8Array<ArrayBuffer>, { status, headers });
}

const utf8 = new TextEncoder();

/** A JSON resource (status 200 unless given). */
export function acmeJson(body: unknown, options: AcmeResponseOptions = {}): Response {
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
export function acmeEmpty(status: number, options: AcmeResponseOptions = {}): Response {
  const headers = headersOf(options);
  if (status !== 204 && status !== 304) headers.set('content-length', '0');
  return new Response(null, { status, headers });
}

/** Any other body (the PEM certificate chain of `cert/{id}`). */
export function acmeBody(
  body: Uint8Array | string,
  contentType: string,
  options: AcmeResponseOptions = {},
): Response {
  const bytes = typeof body === 'string' ? utf8.encode(body) : new Uint8Array(body);
  return sized(bytes, options.status ?? 200, headersOf(options, contentType));
}
