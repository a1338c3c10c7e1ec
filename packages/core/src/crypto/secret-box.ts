import { createSecretKey, type KeyObject } from 'node:crypto';
import { CertwrightError } from '../errors.js';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM for secrets at rest (issuer and target config, webhook headers, private keys).
 * Output is `v1.<base64url(iv ‖ ciphertext ‖ tag)>`: text, so every SQL engine stores it in a
 * plain text column. The optional `context` is bound as additional authenticated data, so a
 * sealed value copied into another row or column fails to open.
 */
export class SecretBox {
  readonly #key: Promise<CryptoKey>;
  /** The same bytes as input keying material for HKDF, so subkeys never reuse the sealing key. */
  readonly #ikm: Promise<CryptoKey>;

  constructor(key: Uint8Array) {
    if (key.byteLength !== 32) {
      throw new CertwrightError(
        'config_invalid',
        `SecretBox needs a 32-byte key, got ${key.byteLength} bytes`,
      );
    }
    this.#key = globalThis.crypto.subtle.importKey('raw', new Uint8Array(key), { name: 'AES-GCM' }, false, [
      'encrypt',
      'decrypt',
    ]);
    this.#ikm = globalThis.crypto.subtle.importKey('raw', new Uint8Array(key), 'HKDF', false, ['deriveBits']);
  }

  /**
   * An HMAC-SHA-256 key derived from this box's key with HKDF-SHA-256 (RFC 5869; empty salt,
   * the key being uniformly random already). Each purpose passes its own `info` label, so no two
   * purposes share a key and none shares the sealing key. It is a node:crypto secret KeyObject —
   * an HMAC over a short message is a synchronous call there — built from the derived bits, since
   * converting a non-extractable CryptoKey to a KeyObject is deprecated (Node.js DEP0204).
   */
  async deriveHmacKey(info: string): Promise<KeyObject> {
    const bits = await globalThis.crypto.subtle.deriveBits(
      { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: new TextEncoder().encode(info) },
      await this.#ikm,
      256,
    );
    const bytes = new Uint8Array(bits);
    try {
      return createSecretKey(bytes);
    } finally {
      bytes.fill(0);
    }
  }

  async seal(plaintext: string | Uint8Array, context = ''): Promise<string> {
    const iv = globalThis.crypto.getRandomValues(new Uint8Array(IV_BYTES));
    const data = typeof plaintext === 'string' ? new TextEncoder().encode(plaintext) : plaintext;
    const sealed = new Uint8Array(
      await globalThis.crypto.subtle.encrypt(
        { name: 'AES-GCM', iv, additionalData: new TextEncoder().encode(context), tagLength: TAG_BYTES * 8 },
        await this.#key,
        new Uint8Array(data),
      ),
    );
    const out = new Uint8Array(IV_BYTES + sealed.byteLength);
    out.set(iv, 0);
    out.set(sealed, IV_BYTES);
    return `v${VERSION}.${toBase64Url(out)}`;
  }

  async openBytes(sealed: string, context = ''): Promise<Uint8Array> {
    const dot = sealed.indexOf('.');
    if (dot < 0 || sealed.slice(0, dot) !== `v${VERSION}`) {
      throw new CertwrightError('internal', 'sealed secret has an unknown format');
    }
    const raw = fromBase64Url(sealed.slice(dot + 1));
    if (raw.byteLength < IV_BYTES + TAG_BYTES)
      throw new CertwrightError('internal', 'sealed secret is truncated');
    try {
      return new Uint8Array(
        await globalThis.crypto.subtle.decrypt(
          {
            name: 'AES-GCM',
            iv: raw.subarray(0, IV_BYTES),
            additionalData: new TextEncoder().encode(context),
            tagLength: TAG_BYTES * 8,
          },
          await this.#key,
          raw.subarray(IV_BYTES),
        ),
      );
    } catch (cause) {
      // Deliberately vague: wrong key, wrong context and tampering look the same to a caller.
      throw new CertwrightError(
        'internal',
        'sealed secret failed authentication (wrong key or tampered data)',
        { cause },
      );
    }
  }

  async open(sealed: string, context = ''): Promise<string> {
    return new TextDecoder().decode(await this.openBytes(sealed, context));
  }

  /** A fresh random 32-byte key (for tests and first-run key generation). */
  static generateKey(): Uint8Array {
    return globalThis.crypto.getRandomValues(new Uint8Array(32));
  }
}

function toBase64Url(bytes: Uint8Array): string {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new CertwrightError('internal', 'sealed secret is not base64url');
  const bin = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i += 1) out[i] = bin.charCodeAt(i);
  return out;
}
