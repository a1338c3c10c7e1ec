import type { AcmeAccount, AcmeAuthorizationWithChallenges, CertificateProfile } from '@certwright/core';
import type { AcmeChallengeView, AcmeOrderView } from '../server/common.js';
import type { AcmeRenewalInfo } from '../server/renewal-info.js';
import type { AcmeRevokeInput, AcmeRevoker } from '../server/revoke.js';

/**
 * What the order-side endpoints (new-order, order, finalize, authz, challenge, cert,
 * revoke-cert, renewal-info) call; `AcmeServer` (`server/`) implements it. The
 * account is the one `authenticate()` returned; every method answers only for objects of it.
 */
export interface AcmeOrderAuthority {
  /**
   * RFC 8555 §7.4; the payload as the client sent it (validated by the service). `profile`:
   * the account's profile as the request was routed by, which the service may use instead of
   * reading it again.
   */
  newOrder(account: AcmeAccount, payload: unknown, profile?: CertificateProfile): Promise<AcmeOrderView>;
  order(account: AcmeAccount, id: string): Promise<AcmeOrderView>;
  finalize(account: AcmeAccount, id: string, csrDer: Uint8Array): Promise<AcmeOrderView>;
  authorization(account: AcmeAccount, id: string): Promise<AcmeAuthorizationWithChallenges>;
  deactivateAuthorization(account: AcmeAccount, id: string): Promise<AcmeAuthorizationWithChallenges>;
  challenge(account: AcmeAccount, id: string): Promise<AcmeChallengeView>;
  respondToChallenge(account: AcmeAccount, id: string): Promise<AcmeChallengeView>;
  /** The PEM chain of a valid order (its id is the certificate's id on the wire). */
  certificateChain(account: AcmeAccount, orderId: string): Promise<{ pem: string; issuerChainPem: string }>;
  revoke(input: AcmeRevokeInput, by: AcmeRevoker): Promise<void>;
  renewalInfo(certId: string): Promise<AcmeRenewalInfo>;
}
