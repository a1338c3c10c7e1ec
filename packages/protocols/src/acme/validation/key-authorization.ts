import { createHash } from 'node:crypto';
import type { RawExtension } from '@certwright/core/pki';

/** id-pe-acmeIdentifier (RFC 8737 §6.1). */
export const ACME_IDENTIFIER_OID = '1.3.6.1.5.5.7.1.31';

/** SHA-256 of the key authorization: the acmeIdentifier value (RFC 8737 §3) and, base64url, the dns-01 TXT value (RFC 8555 §8.4). */
export const keyAuthorizationDigest = (keyAuthorization: string): Buffer =>
  createHash('sha256').update(keyAuthorization, 'utf8').digest();

/** The TXT record value dns-01 expects: base64url(SHA-256(key authorization)), no padding. */
export const dns01TxtValue = (keyAuthorization: string): string =>
  keyAuthorizationDigest(keyAuthorization).toString('base64url');

/**
 * The critical acmeIdentifier extension a tls-alpn-01 certificate carries (RFC 8737 §3): for
 * ACME clients answering the challenge and for tests, with the certificate builder's
 * `extraExtensions`.
 */
export const acmeIdentifierExtension = (keyAuthorization: string): RawExtension => ({
  oid: ACME_IDENTIFIER_OID,
  critical: true,
  value: Buffer.concat([Buffer.from([0x04, 0x20]), keyAuthorizationDigest(keyAuthorization)]),
});
