import type { EstClient, EstEnrollResult, EstOperation } from '../server/enrollment.js';

/** What the EST endpoints need (core's `EstService` provides it; an embedder may supply its own). */
export interface EstAuthority {
  /** CA certificates of the route's profile, issuing CA first, DER; `not_found` for an unknown path id. */
  caCertificates(pathId: string | null): Promise<Uint8Array[]>;
  /** CsrAttrs DER, or null when the profile asks for nothing. */
  csrAttributes(pathId: string | null): Promise<Uint8Array | null>;
  enroll(
    pathId: string | null,
    operation: EstOperation,
    client: EstClient,
    body: Uint8Array,
  ): Promise<EstEnrollResult>;
}
