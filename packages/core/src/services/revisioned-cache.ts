/**
 * Reads remembered for a short time and only while nothing changed them through this process:
 * the protocol handlers' profile and account lookups and the issuance path's profile and policy
 * rule reads.
 *
 * An entry is used only while younger than `ttlMs` and while `revision()` (the owning service's
 * change counter, grown after every local write) is what it was BEFORE the read. A change made
 * through this process is therefore seen by the next call, even when it committed while a read
 * was under way (that read's answer is returned to its caller but not used again); a change
 * made by another instance is seen within `ttlMs`. A `ttlMs` of 0 or less keeps nothing. A read
 * that throws is not remembered, nor is a value `keep` refuses (an account that does not exist).
 */
export interface RevisionedCacheOptions<V> {
  ttlMs: number;
  revision: () => number;
  /** Monotonic milliseconds; tests drive it by hand. */
  now?: () => number;
  /** Entries kept at most; the oldest written goes first. */
  max?: number;
  /** Whether a value read may be reused; default every value, null included. */
  keep?: (value: V) => boolean;
}

export class RevisionedCache<V> {
  readonly #entries = new Map<string, { value: V; at: number; revision: number }>();
  readonly #ttlMs: number;
  readonly #revision: () => number;
  readonly #now: () => number;
  readonly #max: number;
  readonly #keep: (value: V) => boolean;

  constructor(options: RevisionedCacheOptions<V>) {
    this.#ttlMs = options.ttlMs;
    this.#revision = options.revision;
    this.#now = options.now ?? (() => performance.now());
    this.#max = options.max ?? 256;
    this.#keep = options.keep ?? (() => true);
  }

  async get(key: string, read: () => Promise<V>): Promise<V> {
    const revision = this.#revision();
    const hit = this.#entries.get(key);
    if (hit && hit.revision === revision && this.#now() - hit.at < this.#ttlMs) return hit.value;
    // Taken before the read: the entry's age counts from before what it saw was committed.
    const at = this.#now();
    const value = await read();
    if (this.#ttlMs <= 0) return value;
    this.#entries.delete(key);
    if (!this.#keep(value)) return value;
    if (this.#entries.size >= this.#max) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(key, { value, at, revision });
    return value;
  }
}
