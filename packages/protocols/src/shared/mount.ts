import { CertwrightError, isPermission, type Permission, type RequestHead } from '@certwright/core';
import type { ProtocolEntry } from './entry.js';

export {
  type BodyReader,
  type ProtocolEntry,
  toWebResponse,
  webHandlerOf,
  withWebHandler,
} from './entry.js';

/**
 * Which per-client budget an unauthenticated request spends. Each public route and protocol
 * mount names its class; the numbers come from configuration (`SVC_RATE_LIMIT_*`).
 * - `public`: probes, build information, the API reference.
 * - `pki`: CRL and OCSP for relying parties.
 * - `enrollment`: ACME, EST and SCEP.
 */
export type RateLimitClass = 'public' | 'pki' | 'enrollment';

export const RATE_LIMIT_CLASSES: readonly RateLimitClass[] = ['public', 'pki', 'enrollment'];

/**
 * A route or protocol mount that answers without an API key says so, and why. Everything
 * else is authenticated: there is no other way to make a path public.
 */
export interface PublicAccess {
  /** Shown in docs and the OpenAPI document: who needs this without a key. */
  why: string;
  /** The per-client request limit that applies instead of authentication. */
  rateLimit: RateLimitClass;
}

/** An OpenAPI 3.1 operation object, written by hand for wire protocols (no zod schemas). */
export type OpenApiOperation = Record<string, unknown> & { operationId: string };

/**
 * A wire protocol (CRL, OCSP, ACME, EST, SCEP) served under a path prefix by its own
 * {@link ProtocolEntry}, in its own formats. createHandler dispatches to a mount before REST
 * routing, and offers the mount's `bodyLimit` requests on its direct entry when it is public.
 */
export interface ProtocolMount extends ProtocolEntry {
  /** The mount owns `prefix` and every path below `prefix/`; no trailing slash. */
  prefix: string;
  /** Route template for metrics and logs; never the raw path. */
  route: string;
  /**
   * Why the protocol answers without an API key (it authenticates in its own way, or not at
   * all) and the per-client rate limit it runs under. Absent: the caller authenticates like on
   * a REST route and must hold `permission`.
   */
  public?: PublicAccess;
  /**
   * What a non-public mount requires of its authenticated caller, from the permission
   * catalogue (docs/auth/permissions.md). Exactly one of `public` and `permission` is given:
   * a mount with neither, or both, is refused at start-up.
   */
  permission?: Permission;
  /**
   * The answer to a client over its rate limit, in the protocol's own format (a 429 with an
   * OCSP `tryLater` body, an ACME `rateLimited` problem). Default: 429 text with Retry-After.
   */
  rateLimited?: (retryAfterSeconds: number, request: RequestHead) => Response | Promise<Response>;
  /** Operations this mount serves, by OpenAPI path template; they join the API document. */
  operations?: Record<string, Partial<Record<'get' | 'post' | 'put' | 'delete', OpenApiOperation>>>;
  /** Which of `operations` a request is, for metrics, logs and conformance checks. */
  operationOf?: (request: RequestHead) => string | undefined;
}

/** Longest-prefix lookup over the mounts; refuses malformed or duplicate prefixes at start-up. */
export class ProtocolMounts {
  readonly #mounts: readonly ProtocolMount[];
  /** Each mount's prefix with the trailing '/', built once: match runs on every request. */
  readonly #below: readonly string[];

  constructor(mounts: readonly ProtocolMount[]) {
    const seen = new Set<string>();
    for (const mount of mounts) {
      if (!/^\/[^?#]*[^/?#]$/.test(mount.prefix)) {
        throw new CertwrightError(
          'config_invalid',
          `protocol mount prefix '${mount.prefix}' must start with '/' and not end with '/'`,
        );
      }
      if (seen.has(mount.prefix)) {
        throw new CertwrightError('config_invalid', `two protocol mounts claim '${mount.prefix}'`);
      }
      if (mount.public && mount.permission !== undefined) {
        throw new CertwrightError(
          'config_invalid',
          `protocol mount '${mount.prefix}' is public and cannot also require ${mount.permission}`,
        );
      }
      if (!mount.public && (mount.permission === undefined || !isPermission(mount.permission))) {
        throw new CertwrightError(
          'config_invalid',
          `protocol mount '${mount.prefix}' must be public or name a permission of the catalogue (got ${String(mount.permission)})`,
        );
      }
      seen.add(mount.prefix);
    }
    this.#mounts = [...mounts].sort((a, b) => b.prefix.length - a.prefix.length);
    this.#below = this.#mounts.map((m) => `${m.prefix}/`);
  }

  get all(): readonly ProtocolMount[] {
    return this.#mounts;
  }

  match(pathname: string): ProtocolMount | undefined {
    for (let i = 0; i < this.#mounts.length; i++) {
      const mount = this.#mounts[i]!;
      if (pathname === mount.prefix || pathname.startsWith(this.#below[i]!)) return mount;
    }
    return undefined;
  }
}

/** The default over-limit answer: plain 429, as the protocols' other errors are plain text. */
export function tooManyRequestsText(retryAfterSeconds: number): Response {
  return new Response('too many requests; retry later\n', {
    status: 429,
    headers: {
      'content-type': 'text/plain; charset=utf-8',
      'retry-after': String(retryAfterSeconds),
      'cache-control': 'no-store',
    },
  });
}
