import {
  type EphemeralStore,
  type Handler,
  type Logger,
  type PlainResponse,
  type RequestHead,
  readBodyBytes,
  silentLogger,
  type TransportContext,
  withFixedLength,
} from '@certwright/core';
import type { BodyReader, ProtocolEntry } from '../../shared/entry.js';
import { accountRequestSpender } from './account-limit.js';
import type { AcmeAuthority } from './authority.js';
import { AccountKeyCache, type AcmeContext, type AcmeServerSettings, authenticator } from './context.js';
import { DEFAULT_JWS_LIMITS, type JwsLimits } from './jws.js';
import { AcmeLinks } from './links.js';
import { NonceStore } from './nonces.js';
import { acmeProblem, type ProblemContext, problemFromError } from './problem.js';
import { appendLink, sized, toWebResponse } from './responses.js';
import { ACME_ROUTES, type AcmeRoute, matchRoute } from './routes.js';

/**
 * The ACME server (RFC 8555, RFC 9773) as one Web-standard handler:
 *
 * - `/acme/{resource}` serves the default profile, `/acme/profile/{path_id}/{resource}` any
 *   profile with ACME enabled (its `path_id`, or its id when it has none);
 * - every answer carries `Replay-Nonce`, `Link: <directory>;rel="index"` and
 *   `Cache-Control: no-store`; failures are RFC 8555 §6.7 problem documents.
 *
 * Endpoints are one file each (see `routes.ts` and the {@link AcmeEndpoint} interface in
 * `context.ts`); the wire contract is docs/protocols/acme.md. The handler's `ProtocolEntry`
 * (`answer`, `bodyLimit`) is the same function; `bodyLimit` offers the built-in routes to a host
 * that reads the (small) body itself (docs/architecture.md, "The request pipeline").
 */

export interface AcmeHandlerOptions {
  authority: AcmeAuthority;
  /** Nonces (and nothing else) live here; share one store (Redis) between instances. */
  ephemeral: EphemeralStore;
  /**
   * The external origin clients reach the server at (`https://acme.example.com`), which every
   * URL handed out and every JWS `url` is built from. Default: the request's own origin.
   */
  baseUrl?: string;
  /** Mount path; default `/acme`. */
  basePath?: string;
  /** Default: renewal information served, polled every 6 hours. */
  settings?: Partial<AcmeServerSettings>;
  limits?: Partial<JwsLimits>;
  /** Lifetime of an unused nonce; default 1 hour. */
  nonceTtlMs?: number;
  /** Who the request comes from (per-address limits); default the socket's peer. */
  clientAddress?: (request: RequestHead, transport: TransportContext) => string;
  now?: () => Date;
  logger?: Logger;
  /** Endpoints beyond the built-in ones (tests, embedders); matched after them, on the Web path only. */
  routes?: readonly AcmeRoute[];
}

export type AcmeHandler = Handler &
  Required<ProtocolEntry> & {
    /**
     * The answer to a client its host refused for its rate limit, before the handler ran: a
     * `rateLimited` problem with `Retry-After`, a fresh nonce and the index link, like every
     * other answer (RFC 8555 §6.5, §6.6, §7.1).
     */
    readonly rateLimited: (request: RequestHead, retryAfterSeconds: number) => Promise<Response>;
  };

export const ACME_BASE_PATH = '/acme';

export const DEFAULT_ACME_SETTINGS: Readonly<AcmeServerSettings> = Object.freeze({
  renewalInfo: true,
  renewalInfoPollSeconds: 6 * 60 * 60,
  // 20 signed requests a second per account, averaged over 10 s (docs/operations/configuration.md).
  accountRequests: Object.freeze({ limit: 200, windowMs: 10_000 }),
});

const PROBLEM_JSON = 'application/problem+json';
const JOSE_JSON = 'application/jose+json';

interface Located {
  /** Null: the shorthand routes of the default profile. */
  profileSegment: string | null;
  /** Path below the profile's base. */
  rest: string[];
  basePath: string;
}

function locate(pathname: string, mount: string): Located | null {
  if (pathname !== mount && !pathname.startsWith(`${mount}/`)) return null;
  const segments = pathname.slice(mount.length).split('/').slice(1);
  if (segments[0] === 'profile') {
    const segment = segments[1];
    if (segment === undefined || !/^[A-Za-z0-9._:-]{1,128}$/.test(segment)) return null;
    return { profileSegment: segment, rest: segments.slice(2), basePath: `${mount}/profile/${segment}` };
  }
  return { profileSegment: null, rest: segments, basePath: mount };
}

export function createAcmeHandler(options: AcmeHandlerOptions): AcmeHandler {
  const mount = (options.basePath ?? ACME_BASE_PATH).replace(/\/+$/, '');
  const limits: JwsLimits = { ...DEFAULT_JWS_LIMITS, ...options.limits };
  const settings: AcmeServerSettings = { ...DEFAULT_ACME_SETTINGS, ...options.settings };
  const nonces = new NonceStore(options.ephemeral, { ttlMs: options.nonceTtlMs });
  const spendAccount = accountRequestSpender(
    options.ephemeral,
    settings.accountRequests,
    options.logger ?? silentLogger,
  );
  const keys = new AccountKeyCache();
  const routes = [...ACME_ROUTES, ...(options.routes ?? [])];
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? (() => new Date());
  const { authority } = options;
  /** Where every URL handed out starts: the configured base URL, else the request's origin. */
  const originOf = (url: URL): string => (options.baseUrl ?? url.origin).replace(/\/+$/, '');

  const problem = (error: unknown, problemContext: ProblemContext): PlainResponse => {
    const answer = problemFromError(error, problemContext);
    if (answer.log) logger.error({ err: error }, 'ACME request failed');
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(answer.headers)) headers[name.toLowerCase()] = value;
    headers['content-type'] = PROBLEM_JSON;
    return sized(new TextEncoder().encode(JSON.stringify(answer.body)), answer.status, headers);
  };

  const route = async (
    request: RequestHead,
    url: URL,
    readBody: BodyReader,
    transport: TransportContext,
    origin: string,
    set: (links: AcmeLinks) => void,
    problemContext: ProblemContext,
  ): Promise<PlainResponse> => {
    const located = locate(url.pathname, mount);
    if (!located) throw acmeProblem('malformed', 'no ACME resource at this path', { status: 404 });
    const profile = located.profileSegment
      ? await authority.profileForPath(located.profileSegment)
      : await authority.defaultProfile();
    if (!profile) throw acmeProblem('malformed', 'no ACME directory is served at this path', { status: 404 });
    const links = new AcmeLinks(origin, located.basePath);
    set(links);
    const match = matchRoute(routes, request.method, located.rest);
    if (match.kind === 'none')
      throw acmeProblem('malformed', 'no ACME resource at this path', { status: 404 });
    if (match.kind === 'method_not_allowed') {
      throw acmeProblem('malformed', `${request.method} is not allowed here`, {
        status: 405,
        headers: { allow: match.allow.join(', ') },
      });
    }
    problemContext.endpoint = match.route.path;
    const requestUrl = `${origin}${url.pathname}${url.search}`;
    const ctx: AcmeContext = {
      request,
      transport,
      profile,
      links,
      authority,
      url: requestUrl,
      clientAddress: options.clientAddress?.(request, transport) ?? transport.remoteAddress,
      settings,
      now,
      logger,
      authenticate: authenticator({
        request,
        readBody,
        url: requestUrl,
        profile,
        links,
        authority,
        nonces,
        limits,
        keys,
        spendAccount,
      }),
    };
    return match.route.endpoint(ctx, match.params);
  };

  /** Every request, on either path: the endpoint's answer or problem, completed with the common headers. */
  const answer = async (
    request: RequestHead,
    readBody: BodyReader,
    transport: TransportContext,
  ): Promise<PlainResponse> => {
    const url = new URL(request.url);
    const origin = originOf(url);
    let links: AcmeLinks | undefined;
    const problemContext: ProblemContext = {};
    let result: PlainResponse;
    try {
      result = await route(request, url, readBody, transport, origin, (l) => (links = l), problemContext);
    } catch (error) {
      result = problem(error, problemContext);
    }
    const { headers } = result;
    try {
      // RFC 8555 §6.5: a fresh nonce on every answer, so a client never needs an extra round
      // trip — a badNonce problem included, which the client retries with this one.
      headers['replay-nonce'] = await nonces.issue();
    } catch (error) {
      logger.error({ err: error }, 'ACME nonce could not be issued');
      return problem(
        acmeProblem('serverInternal', 'the server is unavailable', { status: 503, cause: error }),
        {},
      );
    }
    if (links) appendLink(headers, { url: links.directory, rel: 'index' });
    headers['cache-control'] ??= 'no-store';
    return result;
  };

  const handler: Handler = async (request, transport) => {
    const plain = await answer(request, (maxBytes) => readBodyBytes(request, maxBytes), transport);
    return withFixedLength(toWebResponse(plain), request.method);
  };

  /** The built-in routes; an embedder's extra `routes` are answered on the Web path only. */
  const bodyLimit = (
    method: string,
    pathname: string,
    headers?: RequestHead['headers'],
  ): number | undefined => {
    const located = locate(pathname, mount);
    if (located === null || matchRoute(ACME_ROUTES, method, located.rest).kind !== 'route') return undefined;
    if (method !== 'POST') return 0;
    // The Web path answers the 415 of a JWS in another content type.
    const type = headers?.get('content-type');
    if (type === null || (type !== undefined && type.split(';')[0]!.trim().toLowerCase() !== JOSE_JSON))
      return undefined;
    return limits.maxBytes;
  };

  const rateLimited = async (request: RequestHead, retryAfterSeconds: number): Promise<Response> => {
    const url = new URL(request.url);
    const origin = originOf(url);
    const plain = problem(
      acmeProblem('rateLimited', `too many requests from this client; retry after ${retryAfterSeconds} s`, {
        headers: { 'retry-after': String(retryAfterSeconds) },
      }),
      {},
    );
    const { headers } = plain;
    // A store that cannot issue a nonce leaves it out rather than turning the 429 into a 503.
    try {
      headers['replay-nonce'] = await nonces.issue();
    } catch (error) {
      logger.warn({ err: error }, 'ACME nonce could not be issued for a rate-limited answer');
    }
    // The index of the directory the path names; no profile lookup for a client being held off.
    const located = locate(url.pathname, mount);
    if (located)
      appendLink(headers, { url: new AcmeLinks(origin, located.basePath).directory, rel: 'index' });
    headers['cache-control'] = 'no-store';
    return toWebResponse(plain);
  };

  return Object.assign(handler, { answer, bodyLimit, rateLimited });
}
