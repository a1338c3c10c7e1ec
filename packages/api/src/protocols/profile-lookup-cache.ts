import type { CertificateProfile } from '@certwright/core';

/**
 * Profile reads of a protocol handler, remembered for a short time: every ACME request names
 * its profile, and reading the row on each of them costs more than the rest of a nonce request.
 *
 * An entry is used only while younger than `ttlMs` and while `revision()` (the profile
 * service's change counter) is what it was before the read, so a change made through this
 * process is seen by the next request; a change made by another instance is seen within
 * `ttlMs`. The services behind the handler read the profile from storage themselves for what
 * they decide (order rules, issuance), so a lookup served from here only routes the request.
 */
export class ProfileLookupCache {
  readonly #entries = new Map<string, { profile: CertificateProfile | null; at: number; revision: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly revision: () => number,
    private readonly now: () => number = () => performance.now(),
    private readonly max = 256,
  ) {}

  async get(key: string, read: () => Promise<CertificateProfile | null>): Promise<CertificateProfile | null> {
    const hit = this.#entries.get(key);
    const revision = this.revision();
    if (hit && hit.revision === revision && this.now() - hit.at < this.ttlMs) return hit.profile;
    const at = this.now();
    const profile = await read();
    if (this.ttlMs > 0) {
      if (this.#entries.size >= this.max && !this.#entries.has(key))
        this.#entries.delete(this.#entries.keys().next().value as string);
      this.#entries.set(key, { profile, at, revision });
    }
    return profile;
  }
}
