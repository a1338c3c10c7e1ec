import type { AcmeAccount } from '@certwright/core';

/**
 * Account reads of the ACME handler by `kid`, remembered for a short time: every JWS-signed
 * request names its account, and reading the row for each of them is a database round trip
 * per request.
 *
 * An entry is used only while younger than `ttlMs` and while `revision()` (the account
 * service's change counter) is what it was before the read, so a contact change, deactivation
 * or key rollover made through this process is seen by the next request; one made by another
 * instance is seen within `ttlMs` (docs/protocols/acme.md, "Performance"). Accounts that do not
 * exist are not remembered.
 */
export class AcmeAccountCache {
  readonly #entries = new Map<string, { account: AcmeAccount; at: number; revision: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly revision: () => number,
    private readonly now: () => number = () => performance.now(),
    private readonly max = 4096,
  ) {}

  async get(id: string, read: (id: string) => Promise<AcmeAccount | null>): Promise<AcmeAccount | null> {
    const hit = this.#entries.get(id);
    const revision = this.revision();
    if (hit && hit.revision === revision && this.now() - hit.at < this.ttlMs) return hit.account;
    const at = this.now();
    const account = await read(id);
    if (this.ttlMs <= 0) return account;
    if (!account) {
      this.#entries.delete(id);
      return null;
    }
    this.#entries.delete(id);
    if (this.#entries.size >= this.max) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(id, { account, at, revision });
    return account;
  }
}
