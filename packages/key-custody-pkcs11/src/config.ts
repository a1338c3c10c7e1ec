import { readFileSync } from 'node:fs';
import { fail } from '@certwright/core';

/** Where the token is and how to log in. The PIN is a secret: it never enters a message or a log. */
export interface Pkcs11Config {
  /** Path of the PKCS#11 module (shared library), e.g. /usr/lib/softhsm/libsofthsm2.so. */
  module: string;
  /** The token's label (CKA_LABEL of its TokenInfo), which selects the slot. */
  tokenLabel: string;
  /** The user PIN. */
  pin: string;
  /** Sessions kept open for concurrent operations (default 4). */
  sessions?: number;
}

/**
 * Reads SVC_PKCS11_MODULE, SVC_PKCS11_TOKEN_LABEL and SVC_PKCS11_PIN_FILE or SVC_PKCS11_PIN.
 * Null when no module is configured (no token custody); `config_invalid` naming the variable for
 * anything incomplete.
 */
export function pkcs11ConfigFromEnv(env: Record<string, string | undefined>): Pkcs11Config | null {
  const module = env.SVC_PKCS11_MODULE?.trim();
  if (!module) return null;
  const tokenLabel = env.SVC_PKCS11_TOKEN_LABEL?.trim();
  if (!tokenLabel) throw fail('config_invalid', 'SVC_PKCS11_TOKEN_LABEL is required with SVC_PKCS11_MODULE');
  let pin: string | undefined;
  if (env.SVC_PKCS11_PIN_FILE) {
    try {
      // One trailing newline is what `echo` leaves; the PIN itself is not trimmed further.
      pin = readFileSync(env.SVC_PKCS11_PIN_FILE, 'utf8').replace(/\r?\n$/, '');
    } catch {
      throw fail('config_invalid', 'SVC_PKCS11_PIN_FILE cannot be read');
    }
  } else {
    pin = env.SVC_PKCS11_PIN;
  }
  if (!pin)
    throw fail('config_invalid', 'SVC_PKCS11_PIN_FILE or SVC_PKCS11_PIN is required with SVC_PKCS11_MODULE');
  return { module, tokenLabel, pin };
}
