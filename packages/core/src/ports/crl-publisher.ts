/**
 * Where an issuer's CRLs go besides the service's own routes: a directory served by any web
 * server (DirectoryCrlPublisher), or an object store an embedder adds. The service calls
 * `publish` after every regeneration of a complete or delta CRL, retries a failure a few
 * times, and keeps the outcome per issuer (docs/pki.md, "Publishing CRLs").
 */

export interface CrlPublication {
  issuerId: string;
  /** A complete CRL, or a delta CRL (RFC 5280 §5.2.4). */
  kind: 'crl' | 'delta';
  der: Uint8Array;
  crlNumber: bigint;
  thisUpdate: Date;
  nextUpdate: Date;
  /** The CA certificate that signed the CRL (DER), published next to it for caIssuers. */
  caCertificate: Uint8Array;
}

export interface CrlPublisher {
  /** What the target is, for status and audit ("directory"); never a path or a secret. */
  readonly target: string;
  /**
   * Writes the CRL (DER and PEM) and the CA certificate so that a reader sees either the old
   * or the new files whole, never a torn one; throws when it could not.
   */
  publish(publication: CrlPublication): Promise<void>;
}
