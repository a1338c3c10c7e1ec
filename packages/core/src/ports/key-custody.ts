import type { KeyAlgorithm } from '../pki/keys.js';
import type { SigningKey, SignMechanism } from '../pki/signing-key.js';

/**
 * Where CA private keys live and how they are used. The Local CA never holds key bytes itself:
 * it asks its custody to create a key under a label, reads the public half, and signs through a
 * {@link SigningKey} handle. Implementations: software keys (`@certwright/core`,
 * {@link SoftwareKeyCustody}, kept sealed in the issuer's config) and PKCS#11 tokens
 * (`@certwright/key-custody-pkcs11`).
 *
 * Failures carry typed reasons: `not_found` for an unknown label, `duplicate` for a label in
 * use, `key_not_allowed` for an algorithm or mechanism the custody cannot do, `unavailable`
 * while the custody cannot be reached (token removed, module failing), `config_invalid` for a
 * custody that can never work as configured (wrong PIN, no such token).
 */
export interface KeyCustody {
  /** `software` or `pkcs11`: what the issuer's `key_custody` setting names. */
  readonly kind: string;
  createKey(input: CreateCustodyKey): Promise<CustodyKeyInfo>;
  /** SubjectPublicKeyInfo DER of the key under `label`. */
  publicKey(label: string): Promise<Buffer>;
  sign(label: string, mechanism: SignMechanism, data: Uint8Array): Promise<Buffer>;
  /** A handle the PKI builders sign with; resolves the key once. */
  signingKey(label: string): Promise<SigningKey>;
  list(): Promise<CustodyKeyInfo[]>;
  destroy(label: string): Promise<void>;
  /** Whether the custody can sign now (feeds `/ready`). Never throws. */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}

export interface CreateCustodyKey {
  algorithm: KeyAlgorithm;
  /** Unique within the custody: the CA's key label. */
  label: string;
  /**
   * Whether the private key may ever leave the custody. CA keys on a token are created
   * non-extractable; software keys are extractable by nature (they are sealed, not hidden).
   */
  extractable: boolean;
}

export interface CustodyKeyInfo {
  label: string;
  algorithm: KeyAlgorithm;
  extractable: boolean;
}

/** Labels: printable, bounded, so that they read well in a token's object list and in logs. */
export const CUSTODY_LABEL = /^[A-Za-z0-9][A-Za-z0-9 ._:/-]{0,63}$/;
