import type { ScepClient, ScepOperationResult } from '../server/service.js';

/** What the SCEP endpoints need (core's `ScepService` provides it; an embedder may supply its own). */
export interface ScepAuthority {
  /** GetCACaps; `not_found` for an unknown path id or SCEP disabled. */
  capabilities(pathId: string | null): Promise<readonly string[]>;
  /** GetCACert: CA certificates (issuing CA first) and the RA certificate, DER. */
  caCertificates(pathId: string | null): Promise<{ ca: Uint8Array[]; ra: Uint8Array | null }>;
  /**
   * GetCACert with an RA, as sent: the certificates-only SignedData of the CA certificates and
   * the RA certificate. Optional: an authority that keeps it ready saves building it per request.
   */
  caCertificatesMessage?(pathId: string | null): Promise<Uint8Array>;
  /** One PKIOperation: throws only when no CertRep can be formed. */
  pkiOperation(pathId: string | null, client: ScepClient, body: Uint8Array): Promise<ScepOperationResult>;
}
