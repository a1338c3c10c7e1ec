import { randomFillSync } from 'node:crypto';
import type { EphemeralStore } from '@certwright/core';
import { acmeProblem } from './problem.js';

/**
 * Anti-replay nonces (RFC 8555 §6.5): 128 random bits, base64url, issued into the
 * EphemeralStore with a TTL and consumed exactly once (`consume` is atomic across instances
 * sharing a Redis store). Cheap on purpose: clients fetch one before nearly every request.
 */

export interface NonceOptions {
  /** How long an unused nonce stays valid; default 1 hour. */
  ttlMs?: number;
  /** 16 random bytes per nonce; injectable for tests. */
  random?: (size: number) => Uint8Array;
}

const KEY_PREFIX = 'acme:nonce:';
const NONCE_BYTES = 16;
/** Nonces' random bytes are drawn this many at a time: one call into OpenSSL per 256 nonces instead of one each. */
const POOL_NONCES = 256;
const NONCE = /^[A-Za-z0-9_-]{22}$/;
export const DEFAULT_NONCE_TTL_MS = 60 * 60 * 1000;

export class NonceStore {
  readonly #store: EphemeralStore;
  readonly #ttlMs: number;
  readonly #random: ((size: number) => Uint8Array) | undefined;
  readonly #pool = Buffer.alloc(NONCE_BYTES * POOL_NONCES);
  #poolUsed = POOL_NONCES;

  constructor(store: EphemeralStore, options: NonceOptions = {}) {
    this.#store = store;
    this.#ttlMs = options.ttlMs ?? DEFAULT_NONCE_TTL_MS;
    this.#random = options.random;
  }

  /** 16 fresh random bytes as base64url; each pool byte is used for one nonce only. */
  #fresh(): string {
    if (this.#random) return Buffer.from(this.#random(NONCE_BYTES)).toString('base64url');
    if (this.#poolUsed === POOL_NONCES) {
      randomFillSync(this.#pool);
      this.#poolUsed = 0;
    }
    const start = NONCE_BYTES * this.#poolUsed++;
    return this.#pool.toString('base64url', start, start + NONCE_BYTES);
  }

  /** A fresh nonce, stored until it is used or expires. */
  async issue(): Promise<string> {
    for (;;) {
      const nonce = this.#fresh();
      // A collision of 128 random bits does not happen; the loop only keeps the contract exact.
      if (await this.#store.putIfAbsent(KEY_PREFIX + nonce, '1', this.#ttlMs)) return nonce;
    }
  }

  /** Spends `nonce`, or throws badNonce: unknown, expired, already used or not one of ours. */
  async consume(nonce: string | undefined): Promise<void> {
    if (nonce === undefined || !NONCE.test(nonce)) {
      throw acmeProblem('badNonce', 'the nonce is not one this server issued');
    }
    if ((await this.#store.consume(KEY_PREFIX + nonce)) === undefined) {
      throw acmeProblem('badNonce', 'the nonce is unknown, expired or already used');
    }
  }
}
