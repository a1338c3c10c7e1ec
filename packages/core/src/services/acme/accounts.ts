import type { AcmeAccount } from '../../domain/acme.js';
import { notFound } from '../../errors.js';
import type { AuditService } from '../audit.js';
import type { ServiceDeps } from '../context.js';

/**
 * ACME accounts (RFC 8555 §7.3) and their external-account-binding keys (§7.3.4). The
 * protocol layer (`@certwright/protocols/acme`) verifies JWS signatures and nonces; this
 * service owns the rules about accounts themselves.
 */
export class AcmeAccountService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
  ) {}

  /** The account, or `not_found`. */
  async get(id: string): Promise<AcmeAccount> {
    const account = await this.deps.storage.acmeAccounts.get(id);
    if (!account) throw notFound('ACME account', id);
    return account;
  }

  /** The account a key (RFC 7638 thumbprint) opened on a profile, or null. */
  findByKey(profileId: string, thumbprint: string): Promise<AcmeAccount | null> {
    return this.deps.storage.acmeAccounts.getByThumbprint(profileId, thumbprint);
  }
}
