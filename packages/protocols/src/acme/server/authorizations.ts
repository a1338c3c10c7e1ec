import type {
  AcmeAccount,
  AcmeAuthorizationStatus,
  AcmeAuthorizationWithChallenges,
  AcmeOrder,
  Queue,
  ServiceDeps,
  Storage,
} from '@certwright/core';
import { fail } from '@certwright/core';
import type { AcmeOrderAuthority } from '../wire/order-authority.js';
import { authorizationView, effectiveAuthorizationStatus, ownedBy } from './common.js';
import type { AcmeRecent } from './recent.js';
import { requeueStaleValidations } from './validation-queue.js';

/** Authorization states that can never lead to a valid order again. */
const FAILED: ReadonlySet<AcmeAuthorizationStatus> = new Set([
  'invalid',
  'deactivated',
  'expired',
  'revoked',
]);

/**
 * The order follows its authorizations (RFC 8555 §7.1.6): a pending order whose authorizations
 * are all valid becomes `ready`; one whose authorization failed becomes `invalid`. Call with the
 * order locked, after the authorization changed, inside the same transaction.
 */
export async function advanceOrder(tx: Storage, order: AcmeOrder, now: Date): Promise<AcmeOrder> {
  if (order.status !== 'pending') return order;
  const statuses = (await tx.acmeAuthorizations.listForOrder(order.id)).map((a) =>
    effectiveAuthorizationStatus(a, now),
  );
  if (statuses.some((s) => FAILED.has(s))) return tx.acmeOrders.update(order.id, { status: 'invalid' });
  if (statuses.every((s) => s === 'valid')) return tx.acmeOrders.update(order.id, { status: 'ready' });
  return order;
}

/** Authorizations of the ACME server (RFC 8555 §7.5): POST-as-GET and deactivation. */
export class AcmeAuthorizationService
  implements Pick<AcmeOrderAuthority, 'authorization' | 'deactivateAuthorization'>
{
  constructor(
    private readonly deps: ServiceDeps,
    private readonly queue?: Pick<Queue, 'enqueue'>,
    /** Shared with the order service of the same process (AcmeServer). */
    private readonly recent?: AcmeRecent,
  ) {}

  async authorization(account: AcmeAccount, id: string): Promise<AcmeAuthorizationWithChallenges> {
    const authz = ownedBy(
      this.recent?.validAuthorizations.take(id) ?? (await this.deps.storage.acmeAuthorizations.get(id)),
      account,
      'ACME authorization',
      id,
    );
    requeueStaleValidations(this.deps, this.queue, authz.challenges);
    return authorizationView(authz, this.deps.clock.now());
  }

  /**
   * RFC 8555 §7.5.2: a client gives up an authorization it no longer wants honoured. Only a
   * pending or valid one can be deactivated (`invalid_state` otherwise); its pending order
   * becomes invalid.
   */
  async deactivateAuthorization(account: AcmeAccount, id: string): Promise<AcmeAuthorizationWithChallenges> {
    const { storage, clock } = this.deps;
    const found = ownedBy(await storage.acmeAuthorizations.get(id), account, 'ACME authorization', id);
    this.recent?.forgetAuthorization(id, found.order_id);
    await storage.transaction(async (tx) => {
      // Order before authorization: the lock order every ACME writer keeps.
      const order = await tx.acmeOrders.lockForUpdate(found.order_id);
      const authz = await tx.acmeAuthorizations.lockForUpdate(id);
      const now = clock.now();
      const status = effectiveAuthorizationStatus(authz, now);
      if (status !== 'pending' && status !== 'valid')
        throw fail('invalid_state', `authorization '${id}' is ${status} and cannot be deactivated`);
      await tx.acmeAuthorizations.update(id, { status: 'deactivated' });
      if (order.status === 'pending' || order.status === 'ready')
        await tx.acmeOrders.update(order.id, { status: 'invalid' });
    });
    return this.authorization(account, id);
  }
}
