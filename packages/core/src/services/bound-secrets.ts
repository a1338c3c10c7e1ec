import { fail } from '../errors.js';

/**
 * A write-only secret stays bound to the destination it was given for (docs/security.md,
 * "Secrets"). Objects that keep a secret next to a URL (webhook header values, an OIDC
 * provider's client secret) let a caller leave the secret out, or masked, to keep the stored
 * one. Without this rule a principal that may edit the object but cannot read its secrets could
 * move the URL to a host of its own and collect them with the next delivery, test or sign-in.
 */

/** The origin (RFC 6454: scheme, host, port) of an absolute URL; null when the text is none. */
export function urlOrigin(url: string): string | null {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/** A stored secret the write leaves in place instead of being given a value. */
export interface KeptSecret {
  /** The input field that would carry the value, e.g. `headers[0].value`. */
  field: string;
}

/**
 * Refuses a write that moves a destination to another origin while it keeps stored secrets:
 * every kept secret must then be given again. `invalid_input` naming each such field; nothing
 * is refused when the origin stays (a new path on the same server keeps its secrets). Text that
 * is no absolute URL counts as another origin.
 */
export function requireSecretsForNewOrigin(change: {
  from: string;
  to: string;
  kept: readonly KeptSecret[];
}): void {
  if (change.kept.length === 0) return;
  const from = urlOrigin(change.from);
  if (from !== null && from === urlOrigin(change.to)) return;
  const message =
    'is kept from the stored value, but the destination moves to another origin (scheme, host or port): give the value again';
  const fields = change.kept.map(({ field }) => ({ field, message }));
  throw fail('invalid_input', fields.map((f) => `${f.field}: ${message}`).join('; '), { fields });
}
