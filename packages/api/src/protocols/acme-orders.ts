import type { Services } from '@certwright/core';
import type { AcmeOrderAuthority } from '@certwright/protocols/acme';

/** `services.acmeOrders` as the order-side ACME endpoints call it. */
export function acmeOrderAuthority(services: Services): AcmeOrderAuthority {
  const { orders, authorizations, challenges, revocation, renewalInfo } = services.acmeOrders;
  return {
    newOrder: (account, payload, profile) => orders.newOrder(account, payload, profile),
    order: (account, id) => orders.getOrder(account, id),
    finalize: (account, id, csr) => orders.finalize(account, id, csr),
    authorization: (account, id) => authorizations.get(account, id),
    deactivateAuthorization: (account, id) => authorizations.deactivate(account, id),
    challenge: (account, id) => challenges.get(account, id),
    respondToChallenge: (account, id) => challenges.respond(account, id),
    certificateChain: (account, id) => orders.certificateChain(account, id),
    revoke: (input, by) => revocation.revoke(input, by),
    renewalInfo: (certId) => renewalInfo.get(certId),
  };
}
