import type { KeyObject } from 'node:crypto';
import { fail } from '../errors.js';
import {
  exportPkcs8Pem,
  exportSpkiDer,
  generateKeyPair,
  importPkcs8Pem,
  KEY_ALGORITHMS,
  type KeyAlgorithm,
} from '../pki/keys.js';
import type { SigningKey, SignMechanism } from '../pki/signing-key.js';
import {
  type CreateCustodyKey,
  CUSTODY_LABEL,
  type CustodyKeyInfo,
  type KeyCustody,
} from '../ports/key-custody.js';
import { assertMechanismFits, keyAlgorithmOfSpki, signWithKeyObject } from './mechanisms.js';

interface Held {
  key: KeyObject;
  spki: Buffer;
  algorithm: KeyAlgorithm;
  extractable: boolean;
}

/**
 * Software keys: private keys in this process, persisted by their owner as PKCS#8 inside a
 * config that storage seals with the service's SecretBox. The custody itself keeps them in
 * memory only: the Local CA loads its stored keys into one ({@link importPkcs8}) and takes new
 * ones out ({@link exportPkcs8}) to store them sealed.
 */
export class SoftwareKeyCustody implements KeyCustody {
  readonly kind = 'software';
  readonly #keys = new Map<string, Held>();

  async createKey(input: CreateCustodyKey): Promise<CustodyKeyInfo> {
    checkLabel(input.label);
    if (!KEY_ALGORITHMS.includes(input.algorithm)) {
      throw fail('key_not_allowed', `unsupported key algorithm '${String(input.algorithm)}'`);
    }
    if (this.#keys.has(input.label)) throw fail('duplicate', `a key labelled '${input.label}' exists`);
    const pair = await generateKeyPair(input.algorithm);
    // Checked again after the await: a concurrent create of the same label must not replace a key.
    if (this.#keys.has(input.label)) throw fail('duplicate', `a key labelled '${input.label}' exists`);
    this.#keys.set(input.label, {
      key: pair.privateKey,
      spki: exportSpkiDer(pair.publicKey),
      algorithm: input.algorithm,
      extractable: input.extractable,
    });
    return { label: input.label, algorithm: input.algorithm, extractable: input.extractable };
  }

  /** Loads a stored key (sealed PKCS#8 PEM) under `label`; the same key again is a no-op. */
  importPkcs8(label: string, pem: string): CustodyKeyInfo {
    checkLabel(label);
    const key = importPkcs8Pem(pem);
    const spki = exportSpkiDer(key);
    const algorithm = keyAlgorithmOfSpki(spki);
    const held = this.#keys.get(label);
    if (held && !held.spki.equals(spki)) throw fail('duplicate', `a key labelled '${label}' exists`);
    if (!held) this.#keys.set(label, { key, spki, algorithm, extractable: true });
    return { label, algorithm, extractable: true };
  }

  /** The PKCS#8 PEM of an extractable key, for its owner to store sealed. Never log it. */
  exportPkcs8(label: string): string {
    const held = this.#held(label);
    if (!held.extractable) throw fail('not_permitted', `key '${label}' is not extractable`);
    return exportPkcs8Pem(held.key);
  }

  async publicKey(label: string): Promise<Buffer> {
    return Buffer.from(this.#held(label).spki);
  }

  async sign(label: string, mechanism: SignMechanism, data: Uint8Array): Promise<Buffer> {
    return this.signingKeySync(label).sign(mechanism, data);
  }

  async signingKey(label: string): Promise<SigningKey> {
    return this.signingKeySync(label);
  }

  /** The signing handle without a round trip: software keys are already here. */
  signingKeySync(label: string): SigningKey {
    const held = this.#held(label);
    return {
      spki: Buffer.from(held.spki),
      sign: (mechanism, data) => {
        // Resolved per call: a destroyed key must stop signing through old handles too.
        const current = this.#held(label);
        assertMechanismFits(label, current.algorithm, mechanism);
        return signWithKeyObject(current.key, mechanism, data);
      },
    };
  }

  async list(): Promise<CustodyKeyInfo[]> {
    return [...this.#keys].map(([label, h]) => ({
      label,
      algorithm: h.algorithm,
      extractable: h.extractable,
    }));
  }

  async destroy(label: string): Promise<void> {
    this.#held(label);
    this.#keys.delete(label);
  }

  async ready(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    this.#keys.clear();
  }

  #held(label: string): Held {
    const held = this.#keys.get(label);
    if (!held) throw fail('not_found', `no key labelled '${label}' in the software key custody`);
    return held;
  }
}

export function checkLabel(label: string): void {
  if (typeof label !== 'string' || !CUSTODY_LABEL.test(label)) {
    throw fail(
      'invalid_input',
      'a key label is 1–64 characters: letters, digits, space and . _ : / - (not first)',
      { fields: [{ field: 'label', message: 'not a valid key label' }] },
    );
  }
}
