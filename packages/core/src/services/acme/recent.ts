/**
 * Records this process wrote moments ago, kept for the request an ACME client sends next: the
 * finalize after a new-order, the certificate download after a finalize (RFC 8555 §7.4). A
 * caller keeps here only what it may use without reading it again (orders.ts says why for
 * each); `ttlMs` bounds how long, `max` how many (the oldest written goes first).
 */
export class RecentRecords<V> {
  readonly #entries = new Map<string, { value: V; at: number }>();

  constructor(
    private readonly now: () => number,
    private readonly ttlMs = 60_000,
    private readonly max = 1000,
  ) {}

  add(id: string, value: V): void {
    this.#entries.delete(id);
    if (this.#entries.size >= this.max) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(id, { value, at: this.now() });
  }

  get(id: string): V | undefined {
    const hit = this.#entries.get(id);
    if (!hit) return undefined;
    if (this.now() - hit.at < this.ttlMs) return hit.value;
    this.#entries.delete(id);
    return undefined;
  }

  /** The entry, removed: for a record that is used once. */
  take(id: string): V | undefined {
    const value = this.get(id);
    this.#entries.delete(id);
    return value;
  }
}
