import http from 'node:http';
import type net from 'node:net';
import { type CertwrightError, fail, isCertwrightError } from '../errors.js';
import { connectionFailure, connectTcp, Deadline, handshake, type TrustAnchors } from './connect.js';
import type { AddressGuard } from './guard.js';

export interface OutboundRequestOptions {
  /** An HTTP method token; default `GET`. */
  method?: string;
  /** Request headers. `host`, `content-length`, `connection` and other hop-by-hop headers are set here and refused from callers. */
  headers?: Readonly<Record<string, string>> | readonly (readonly [string, string])[];
  body?: string | Uint8Array;
  /** Each hop — connect, TLS, request and the whole response — within this; default 10 000 ms. */
  timeoutMs?: number;
  /** The whole call — lookups, every hop — within this; default 30 000 ms. */
  totalTimeoutMs?: number;
  /** Response body bytes kept; default 1 MiB. */
  maxResponseBytes?: number;
  /** Past `maxResponseBytes`: fail with `response_too_large` (default), or keep the first bytes and cut the connection. */
  onTooLarge?: 'error' | 'truncate';
  /**
   * A 3xx with `Location`: `'error'` (default) fails with `redirect_refused`; `'manual'` returns
   * the 3xx response (its body unread); `'follow'` checks the new destination with the guard (new lookup, every
   * address checked) and goes on, up to `maxRedirects`.
   */
  redirect?: 'error' | 'manual' | 'follow';
  /** Default 10. */
  maxRedirects?: number;
  /** With `'follow'`: return false to refuse a hop (`redirect_refused`), e.g. ports other than 80/443. */
  allowRedirect?: (to: URL) => boolean;
  /** For https: trust these instead of the system roots, or `verify: false` to skip verification. */
  tls?: { ca?: TrustAnchors; verify?: boolean };
  /** Names the URL input in errors (default `url`). */
  field?: string;
}

export interface OutboundTiming {
  /** Name resolution of the final hop. */
  dnsMs: number;
  /** TCP connect of the final hop. */
  connectMs: number;
  /** TLS handshake of the final hop (0 for http). */
  tlsMs: number;
  /** From the final hop's request to its response headers. */
  firstByteMs: number;
  /** The whole call, redirects included. */
  totalMs: number;
}

export interface OutboundResponse {
  status: number;
  /** Lower-case names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** At most `maxResponseBytes`. */
  body: Uint8Array;
  /** True when the body was cut at `maxResponseBytes` (`onTooLarge: 'truncate'`). */
  truncated: boolean;
  /** The URL that answered (after redirects). */
  url: string;
  /** The checked address the final hop connected to. */
  address: string;
  /** The URLs redirected to, in order. */
  redirects: string[];
  timing: OutboundTiming;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Set by the client from the URL and body, or meaningless on a one-request connection. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'upgrade',
]);
/** Headers kept when a redirect leaves the origin; credentials and custom headers are not. */
const CROSS_ORIGIN_SAFE = new Set(['accept', 'accept-language', 'user-agent']);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const invalid = (field: string, message: string): CertwrightError =>
  fail('invalid_input', message, { fields: [{ field, message }] });

/** Parses and vets a destination URL: http(s), no userinfo. */
export function parseOutboundUrl(input: string | URL, field = 'url'): URL {
  let url: URL;
  try {
    url = new URL(String(input));
  } catch {
    throw invalid(field, 'is not a valid absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalid(
      field,
      `the scheme '${url.protocol.slice(0, -1).slice(0, 20)}' is not allowed; use http or https`,
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw invalid(field, 'credentials in the URL (user@host) are not allowed; send them in a header');
  }
  return url;
}

function requestHeaders(options: OutboundRequestOptions, userAgent: string): Map<string, string> {
  const given = options.headers ?? {};
  const pairs: readonly (readonly [string, string])[] = Array.isArray(given)
    ? (given as readonly (readonly [string, string])[])
    : Object.entries(given as Record<string, string>);
  const headers = new Map<string, string>([['user-agent', userAgent]]);
  for (const [name, value] of pairs) {
    const lower = name.toLowerCase();
    try {
      http.validateHeaderName(name);
      http.validateHeaderValue(name, value);
    } catch {
      throw invalid('headers', `header '${name.slice(0, 100)}' is not a valid HTTP header name and value`);
    }
    if (RESERVED_HEADERS.has(lower)) {
      throw invalid('headers', `header '${name}' is set by the client and may not be given`);
    }
    headers.set(lower, value);
  }
  return headers;
}

interface Hop {
  url: URL;
  method: string;
  headers: Map<string, string>;
  body: Uint8Array | undefined;
}

/** Sends one request over a connected socket and reads the bounded answer. */
function exchange(
  socket: net.Socket,
  hop: Hop,
  options: OutboundRequestOptions,
  expectBody: boolean,
): Promise<{
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
  truncated: boolean;
  firstByteMs: number;
}> {
  const started = performance.now();
  const cap = options.maxResponseBytes ?? 1 << 20;
  const truncate = options.onTooLarge === 'truncate';
  const host = hop.url.hostname;
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (error: unknown, value?: Parameters<typeof resolve>[0]) => {
      if (settled) return;
      settled = true;
      if (error === undefined) resolve(value!);
      else reject(error);
    };
    const headers: Record<string, string> = { host: hop.url.host, connection: 'close' };
    for (const [name, value] of hop.headers) headers[name] = value;
    if (hop.body !== undefined) headers['content-length'] = String(hop.body.byteLength);
    const req = http.request({
      createConnection: () => socket,
      method: hop.method,
      path: `${hop.url.pathname}${hop.url.search}`,
      headers,
      setHost: false,
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'HPE_HEADER_OVERFLOW') {
        finish(
          fail('response_too_large', `the response headers from '${host}' are too large`, { cause: error }),
        );
      } else if (error.code?.startsWith('HPE_')) {
        finish(
          fail('connection_failed', `'${host}' answered with a malformed HTTP response`, { cause: error }),
        );
      } else {
        finish(connectionFailure(host, Number(hop.url.port) || 0, error));
      }
    });
    req.on('response', (res) => {
      const firstByteMs = performance.now() - started;
      const responseHeaders: Record<string, string> = {};
      for (const [name, value] of Object.entries(res.headers)) {
        if (value !== undefined) responseHeaders[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      const status = res.statusCode ?? 0;
      const done = (body: Uint8Array, truncated: boolean) =>
        finish(undefined, { status, headers: responseHeaders, body, truncated, firstByteMs });
      if (!expectBody || (REDIRECTS.has(status) && responseHeaders.location !== undefined)) {
        // A redirect's body is never read: the connection closes after one exchange anyway.
        done(new Uint8Array(0), false);
        socket.destroy();
        return;
      }
      const declared = Number(responseHeaders['content-length']);
      if (!truncate && Number.isFinite(declared) && declared > cap) {
        finish(tooLarge(host, cap));
        socket.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        if (size + chunk.byteLength <= cap) {
          chunks.push(chunk);
          size += chunk.byteLength;
          return;
        }
        if (truncate) {
          chunks.push(chunk.subarray(0, cap - size));
          done(Buffer.concat(chunks), true);
        } else {
          finish(tooLarge(host, cap));
        }
        socket.destroy();
      });
      res.on('end', () => done(Buffer.concat(chunks), false));
      res.on('error', (error) => finish(connectionFailure(host, Number(hop.url.port) || 0, error)));
      res.on('aborted', () =>
        finish(fail('connection_failed', `'${host}' closed the connection mid-response`)),
      );
    });
    req.end(hop.body);
  });
}

const tooLarge = (host: string, cap: number): CertwrightError =>
  fail('response_too_large', `the response from '${host}' exceeds ${cap} bytes`);

/** The request of the next hop after a redirect (RFC 9110 §15.4; fetch's method rewriting). */
function nextHop(hop: Hop, status: number, location: string): Hop {
  let to: URL;
  try {
    to = new URL(location, hop.url);
  } catch {
    throw fail('redirect_refused', `the redirect target '${location.slice(0, 200)}' is not a valid URL`);
  }
  if (to.protocol !== 'http:' && to.protocol !== 'https:') {
    throw fail('redirect_refused', `a redirect to the scheme '${to.protocol.slice(0, 20)}' is not followed`);
  }
  if (to.username !== '' || to.password !== '') {
    throw fail('redirect_refused', 'a redirect to a URL with credentials is not followed');
  }
  const rewrite =
    status === 303 ? hop.method !== 'HEAD' : (status === 301 || status === 302) && hop.method === 'POST';
  const headers = new Map(hop.headers);
  if (rewrite) headers.delete('content-type');
  if (to.origin !== hop.url.origin) {
    for (const name of headers.keys()) if (!CROSS_ORIGIN_SAFE.has(name)) headers.delete(name);
  }
  return { url: to, method: rewrite ? 'GET' : hop.method, headers, body: rewrite ? undefined : hop.body };
}

/**
 * One guarded HTTP(S) request: every hop resolves its host once through the guard, connects
 * to a checked address (no second lookup), sends SNI and Host for the name in the URL, and
 * reads at most `maxResponseBytes`. See {@link OutboundRequestOptions} for the policies.
 */
export async function guardedRequest(
  guard: AddressGuard,
  input: string | URL,
  options: OutboundRequestOptions = {},
  userAgent = 'certwright',
): Promise<OutboundResponse> {
  const field = options.field ?? 'url';
  const started = performance.now();
  const method = (options.method ?? 'GET').toUpperCase();
  if (!TOKEN.test(method) || method === 'CONNECT' || method === 'TRACE') {
    throw invalid('method', `'${method.slice(0, 20)}' is not an HTTP method this client sends`);
  }
  const body = typeof options.body === 'string' ? new TextEncoder().encode(options.body) : options.body;
  let hop: Hop = {
    url: parseOutboundUrl(input, field),
    method,
    headers: requestHeaders(options, userAgent),
    body,
  };
  const total = Deadline.after(options.totalTimeoutMs ?? 30_000, 'the request did not complete in time');
  const maxRedirects = options.maxRedirects ?? 10;
  const redirects: string[] = [];
  for (;;) {
    const deadline = Deadline.after(
      options.timeoutMs ?? 10_000,
      `'${hop.url.hostname}' did not answer in time`,
      total,
    );
    const checked = await deadline.race(guard.resolve(hop.url.hostname, field), () => {});
    const port = Number(hop.url.port) || (hop.url.protocol === 'https:' ? 443 : 80);
    const connectStart = performance.now();
    const { socket, address } = await connectTcp(checked.host, checked.addresses, port, deadline);
    const connectMs = performance.now() - connectStart;
    let stream: net.Socket = socket;
    let tlsMs = 0;
    try {
      if (hop.url.protocol === 'https:') {
        const tlsStart = performance.now();
        stream = await handshake(
          checked.host,
          socket,
          {
            ...(checked.literal ? {} : { servername: checked.host }),
            alpn: ['http/1.1'],
            ...options.tls,
          },
          deadline,
        );
        tlsMs = performance.now() - tlsStart;
      }
      const answer = await deadline.race(exchange(stream, hop, options, hop.method !== 'HEAD'), () =>
        stream.destroy(),
      );
      const location = answer.headers.location;
      if (REDIRECTS.has(answer.status) && location !== undefined && options.redirect !== 'manual') {
        if (options.redirect !== 'follow') {
          throw fail(
            'redirect_refused',
            `'${checked.host}' answered ${answer.status} (a redirect); redirects are not followed`,
          );
        }
        if (redirects.length >= maxRedirects) {
          throw fail('redirect_refused', `more than ${maxRedirects} redirects`);
        }
        hop = nextHop(hop, answer.status, location);
        if (options.allowRedirect && !options.allowRedirect(hop.url)) {
          throw fail('redirect_refused', `the redirect to '${hop.url.host}' is not allowed`);
        }
        redirects.push(hop.url.href);
        continue;
      }
      const { firstByteMs, ...response } = answer;
      return {
        ...response,
        url: hop.url.href,
        address,
        redirects,
        timing: {
          dnsMs: checked.dnsMs,
          connectMs,
          tlsMs,
          firstByteMs,
          totalMs: performance.now() - started,
        },
      };
    } catch (error) {
      stream.destroy();
      throw isCertwrightError(error) ? error : connectionFailure(checked.host, port, error);
    } finally {
      socket.destroy();
    }
  }
}
