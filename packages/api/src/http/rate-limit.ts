import type { EphemeralStore, Logger } from '@certwright/core';
import type { RateLimitClass } from '@certwright/protocols/mount';

export { RATE_LIMIT_CLASSES, type RateLimitClass } from '@certwright/protocols/mount';

export interface RateLimitSettings {
  /** The sliding window every per-class limit counts in. */
  windowMs: number;
  /** Requests one client may make per window to each endpoint of a class; 0 switches that limit off. */
  public: number;
  pki: number;
  enrollment: number;
  /**
   * Failed API-key attempts one client may make per `authFailureWindowMs`; the client is then
   * refused with 429 for one window, whatever key it sends. 0 switches the throttle off.
   */
  authFailures: number;
  authFailureWindowMs: number;
}

/**
 * The server's defaults (docs/operations/configuration.md): 20 requests a second per client and
 * endpoint, averaged over 10 s, the order of Let's Encrypt's overall per-address limit — enough
 * for one host running several ACME clients in a row, or a relying party fetching OCSP for many
 * certificates; fleets behind one address are sized in docs/operations/configuration.md.
 */
export const DEFAULT_RATE_LIMITS: Readonly<RateLimitSettings> = Object.freeze({
  windowMs: 10_000,
  public: 200,
  pki: 200,
  enrollment: 200,
  authFailures: 10,
  authFailureWindowMs: 5 * 60_000,
});

export type Verdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

const ALLOWED: Verdict = Object.freeze({ allowed: true });

/**
 * Per-client limits kept in the EphemeralStore, so every instance sharing the store (Redis)
 * counts the same hits. A store that fails lets the request through and logs a warning at
 * most once a minute: an outage of the shared store must not take the service down with it.
 */
export class RateLimiter {
  readonly #store: EphemeralStore;
  readonly #settings: RateLimitSettings;
  readonly #logger: Logger;
  #lastWarning = Number.NEGATIVE_INFINITY;

  constructor(store: EphemeralStore, settings: RateLimitSettings, logger: Logger) {
    this.#store = store;
    this.#settings = settings;
    this.#logger = logger;
  }

  /** Whether requests of `kind` are counted at all (a limit of 0 switches the class off). */
  counts(kind: RateLimitClass): boolean {
    return this.#settings[kind] !== 0;
  }

  /** Spends one request of `client`'s budget for `endpoint` (a route template) in `kind`. */
  async request(kind: RateLimitClass, endpoint: string, client: string): Promise<Verdict> {
    const limit = this.#settings[kind];
    if (limit === 0) return ALLOWED;
    return this.#guarded(async () => {
      const hit = await this.#store.slidingWindowHit(
        `ratelimit:${kind}:${endpoint}:${client}`,
        this.#settings.windowMs,
        limit,
      );
      return hit.allowed ? ALLOWED : { allowed: false, retryAfterSeconds: seconds(hit.retryAfterMs) };
    });
  }

  /**
   * Whether `client` is locked out after too many failed API keys; checked before any key is.
   * Retry-After is the whole lock-out window, an upper bound of what remains.
   */
  async authLockedOut(client: string): Promise<Verdict> {
    if (this.#settings.authFailures === 0) return ALLOWED;
    return this.#guarded(async () => {
      const locked = await this.#store.get(`ratelimit:auth-lockout:${client}`);
      if (locked === undefined) return ALLOWED;
      return { allowed: false, retryAfterSeconds: seconds(this.#settings.authFailureWindowMs) };
    });
  }

  /**
   * Records a failed API key of `client`. The failure that reaches the limit locks the client
   * out for one window. A success resets nothing: neither this client's count nor another's.
   */
  async authFailed(client: string): Promise<void> {
    const { authFailures: limit, authFailureWindowMs: windowMs } = this.#settings;
    if (limit === 0) return;
    await this.#guarded(async () => {
      const hit = await this.#store.slidingWindowHit(`ratelimit:auth-failures:${client}`, windowMs, limit);
      if (hit.count >= limit) {
        await this.#store.putIfAbsent(`ratelimit:auth-lockout:${client}`, '1', windowMs);
      }
      return ALLOWED;
    });
  }

  async #guarded(check: () => Promise<Verdict>): Promise<Verdict> {
    try {
      return await check();
    } catch (error) {
      const now = performance.now();
      if (now - this.#lastWarning >= 60_000) {
        this.#lastWarning = now;
        this.#logger.warn({ err: error }, 'rate limits not enforced: the ephemeral store failed');
      }
      return ALLOWED;
    }
  }
}

/** Whole seconds for Retry-After, at least 1. */
function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
