import { createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';
import { CertwrightError } from '../errors.js';

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** HKDF `info` of a key's id (RFC 5869 §3.2): a label of its own, so the id reveals nothing usable. */
const KEY_ID_INFO = 'certwright secret-box key id v1';
const KEY_ID_BYTES = 8;

interface RingKey {
  id: string;
  aes: Promise<CryptoKey>;
  /** The same bytes as input keying material for HKDF, so subkeys never reuse the sealing key. */
  ikm: Promise<CryptoKey>;
}

export interface SecretBoxOptions {
  /**
   * Keys this box still opens but no longer seals with (SVC_ENCRYPTION_KEY_PREVIOUS during a
   * rotation, docs/operations/key-rotation.md). Opening tries the current key first.
   */
  previous?: readonly Uint8Array[];
  /**
   * Seal in the `v2.<key id>.` format from the start. Without it the box seals in `v1.`, the
   * format release 2.0.0 reads, until {@link SecretBox.sealWithKeyIds} is called; a box with
   * previous keys always seals in `v2.`.
   */
  keyIds?: boolean;
}

/**
 * AES-256-GCM for secrets at rest (issuer and target config, webhook headers, private keys) under
 * a keyring: one current key that seals and any number of previous keys that only open.
 *
 * Two text formats, so every SQL engine stores a sealed value in a plain text column:
 * - `v2.<key id>.<base64url(iv ‖ ciphertext ‖ tag)>` names the key that sealed it (the key id is
 *   `keyIdOf`: 16 hex digits derived from the key, never the key);
 * - `v1.<base64url(iv ‖ ciphertext ‖ tag)>`, the format before keyrings, names none: opening
 *   tries the current key, then each previous one (a failed AES-GCM tag check costs microseconds).
 * The optional `context` is bound as additional authenticated data, so a sealed value copied into
 * another row or column fails to open.
 */
export class SecretBox {
  readonly #current: RingKey;
  readonly #ring: ReadonlyMap<string, RingKey>;
  #keyIds: boolean;

  constructor(key: Uint8Array, options: SecretBoxOptions = {}) {
    const keys = [key, ...(options.previous ?? [])];
    for (const k of keys) {
      if (k.byteLength !== 32) {
        throw new CertwrightError(
          'config_invalid',
          `SecretBox needs a 32-byte key, got ${k.byteLength} bytes`,
        );
      }
    }
    const ring = new Map<string, RingKey>();
    for (const k of keys) {
      const id = keyIdOf(k);
      // The same key listed twice (current and previous) is one key of the ring.
      if (!ring.has(id)) ring.set(id, importRingKey(id, k));
    }
    this.#ring = ring;
    this.#current = ring.get(keyIdOf(key)) as RingKey;
    this.#keyIds = options.keyIds === true || ring.size > 1;
  }

  /** The id of the key that seals. */
  get keyId(): string {
    return this.#current.id;
  }

  /** Every key id of the ring, the current one first. */
  get keyIds(): readonly string[] {
    return [...this.#ring.keys()];
  }

  /** The ids of the previous keys (empty when no rotation is configured). */
  get previousKeyIds(): readonly string[] {
    return this.keyIds.filter((id) => id !== this.#current.id);
  }

  hasKey(id: string): boolean {
    return this.#ring.has(id);
  }

  /** True when this box seals in the `v2.<key id>.` format. */
  get sealsWithKeyIds(): boolean {
    return this.#keyIds;
  }

  /**
   * Switches sealing to the `v2.<key id>.` format, once the database says every instance reads it
   * (after a key rotation, or a database this release created): a box is made before the
   * database can be asked. One way: nothing switches it back.
   */
  sealWithKeyIds(): void {
    this.#keyIds = true;
  }

  /** The key id a `v2.` value names; null for a `v1.` value (which names none). */
  static keyIdOfSealed(sealed: string): string | null {
    const match = /^v2\.([0-9a-f]{16})\./.exec(sealed);
    return match ? (match[1] as string) : null;
  }

  /** True when `sealed` is in the current format under the current key: nothing to re-seal. */
  isCurrent(sealed: string): boolean {
    return sealed.startsWith(`v2.${this.#current.id}.`);
  }

  /**
   * An HMAC-SHA-256 key derived from a ring key (the current one unless `keyId` names another)
   * with HKDF-SHA-256 (RFC 5869; empty salt, the key being uniformly random already). Each
   * purpose passes its own `info` label, so no two purposes share a key and none shares the
   * sealing key. It is a node:crypto secret KeyObject — an HMAC over a short message is a
   * synchronous call there — built from the derived bits, since converting a non-extractable
   * CryptoKey to a KeyObject is deprecated (Node.js DEP0204).
   */
  async deriveHmacKey(info: string, keyId?: string): Promise<KeyObject> {
    const bytes = await this.deriveBytes(info, keyId);
    try {
      return createSecretKey(bytes);
    } finally {
      bytes.fill(0);
    }
  }

  /** The 32 bytes {@link deriveHmacKey} builds its key from; the caller wipes them. */
  async deriveBytes(info: string, keyId?: string): Promise<Uint8Array> {
    const bits = await globalThis.crypto.subtle.deriveBits(
      { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: new TextEncoder().encode(info) },
      await this.#ringKey(keyId ?? this.#current.id).ikm,
      256,
    );
    return new Uint8Array(bits);
  }

  async seal(plaintext: string | Uint8Array, context = ''): Promise<string> {
    return this.#seal(this.#current, plaintext, context, this.#keyIds);
  }

  /**
   * Seals under a named key of the ring, in the `v2.` format. Only for the rows that record which
   * keys the database needs (the server's key check); every secret is sealed with {@link seal}.
   */
  sealUnderKey(keyId: string, plaintext: string | Uint8Array, context = ''): Promise<string> {
    return this.#seal(this.#ringKey(keyId), plaintext, context, true);
  }

  async #seal(
    key: RingKey,
    plaintext: string | Uint8Array,
    context: string,
    keyIds: boolean,
  ): Promise<string> {
    const iv = globalThis.crypto.getRandomValues(new Uint8Array(IV_BYTES));
    const data = typeof plaintext === 'string' ? new TextEncoder().encode(plaintext) : plaintext;
    const sealed = new Uint8Array(
      await globalThis.crypto.subtle.encrypt(
        { name: 'AES-GCM', iv, additionalData: new TextEncoder().encode(context), tagLength: TAG_BYTES * 8 },
        await key.aes,
        new Uint8Array(data),
      ),
    );
    const out = new Uint8Array(IV_BYTES + sealed.byteLength);
    out.set(iv, 0);
    out.set(sealed, IV_BYTES);
    return keyIds ? `v2.${key.id}.${toBase64Url(out)}` : `v1.${toBase64Url(out)}`;
  }

  /** Opens and seals again under the current key in the current format (a rotation's re-seal). */
  async reseal(sealed: string, context = ''): Promise<string> {
    const plain = await this.openBytes(sealed, context);
    try {
      return await this.seal(plain, context);
    } finally {
      plain.fill(0);
    }
  }

  async openBytes(sealed: string, context = ''): Promise<Uint8Array> {
    return (await this.#open(sealed, context)).plain;
  }

  /** The id of the ring key that opens `sealed` (a `v1.` value is tried under each). */
  async openingKeyId(sealed: string, context = ''): Promise<string> {
    const { keyId, plain } = await this.#open(sealed, context);
    plain.fill(0);
    return keyId;
  }

  async open(sealed: string, context = ''): Promise<string> {
    return new TextDecoder().decode(await this.openBytes(sealed, context));
  }

  async #open(sealed: string, context: string): Promise<{ keyId: string; plain: Uint8Array }> {
    let candidates: RingKey[];
    let body: string;
    if (sealed.startsWith('v1.')) {
      candidates = [...this.#ring.values()];
      body = sealed.slice(3);
    } else if (sealed.startsWith('v2.')) {
      const keyId = SecretBox.keyIdOfSealed(sealed);
      if (keyId === null) throw new CertwrightError('internal', 'sealed secret has an unknown format');
      const key = this.#ring.get(keyId);
      if (!key) {
        throw new CertwrightError(
          'internal',
          `sealed secret names key ${keyId}, which is not in the keyring`,
        );
      }
      candidates = [key];
      body = sealed.slice(3 + keyId.length + 1);
    } else {
      throw new CertwrightError('internal', 'sealed secret has an unknown format');
    }
    const raw = fromBase64Url(body);
    if (raw.byteLength < IV_BYTES + TAG_BYTES)
      throw new CertwrightError('internal', 'sealed secret is truncated');
    let failure: unknown;
    for (const key of candidates) {
      try {
        const plain = new Uint8Array(
          await globalThis.crypto.subtle.decrypt(
            {
              name: 'AES-GCM',
              iv: raw.subarray(0, IV_BYTES),
              additionalData: new TextEncoder().encode(context),
              tagLength: TAG_BYTES * 8,
            },
            await key.aes,
            raw.subarray(IV_BYTES),
          ),
        );
        return { keyId: key.id, plain };
      } catch (cause) {
        failure = cause;
      }
    }
    // Deliberately vague: wrong key, wrong context and tampering look the same to a caller.
    throw new CertwrightError(
      'internal',
      'sealed secret failed authentication (wrong key or tampered data)',
      {
        cause: failure,
      },
    );
  }

  #ringKey(id: string): RingKey {
    const key = this.#ring.get(id);
    if (!key) throw new CertwrightError('internal', `key ${id} is not in the keyring`);
    return key;
  }

  /** A fresh random 32-byte key (for tests and first-run key generation). */
  static generateKey(): Uint8Array {
    return globalThis.crypto.getRandomValues(new Uint8Array(32));
  }
}

/**
 * A key's id: the first 8 bytes of HKDF-SHA-256 over the key with its own label, in hex. It names
 * the key in sealed values, start-up messages and backup manifests; it cannot be turned back into
 * the key, and no other purpose derives the same bytes.
 */
export function keyIdOf(key: Uint8Array): string {
  return Buffer.from(hkdfSync('sha256', key, new Uint8Array(0), KEY_ID_INFO, KEY_ID_BYTES)).toString('hex');
}

function importRingKey(id: string, key: Uint8Array): RingKey {
  const aes = globalThis.crypto.subtle.importKey('raw', new Uint8Array(key), { name: 'AES-GCM' }, false, [
    'encrypt',
    'decrypt',
  ]);
  const ikm = globalThis.crypto.subtle.importKey('raw', new Uint8Array(key), 'HKDF', false, ['deriveBits']);
  // An import failure surfaces at first use, not as an unhandled rejection.
  aes.catch(() => {});
  ikm.catch(() => {});
  return { id, aes, ikm };
}

function toBase64Url(bytes: Uint8Array): string {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  // A length of 4n+1 is no base64 at all (atob would throw an untyped DOMException).
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) {
    throw new CertwrightError('internal', 'sealed secret is not base64url');
  }
  const bin = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i += 1) out[i] = bin.charCodeAt(i);
  return out;
}
