import type {
  AcmeAccount,
  AcmeAuthorizationWithChallenges,
  AuditService,
  CertificateProfile,
  RevocationService,
  ServiceDeps,
} from '@certwright/core';
import { RevisionedCache } from '@certwright/core';
import type { AcmeAuthority, NewAccountRequest } from '../wire/authority.js';
import { type AcmeAccountOptions, AcmeAccountService } from './accounts.js';
import { AcmeAuthorizationService } from './authorizations.js';
import { type AcmeChallengeOptions, AcmeChallengeService } from './challenges.js';
import type { AcmeChallengeView, AcmeEnrollment, AcmeOrderView } from './common.js';
import { AcmeOrderService } from './orders.js';
import { AcmeRecent } from './recent.js';
import { type AcmeRenewalInfo, AcmeRenewalInfoService } from './renewal-info.js';
import { AcmeRevocationService, type AcmeRevokeInput, type AcmeRevoker } from './revoke.js';

/** What the ACME server takes from core; `Services` (createServices) is one. */
export interface AcmeKernel {
  readonly deps: ServiceDeps;
  readonly audit: AuditService;
  /** ACME revocations go through the one revocation path (CRL, OCSP, notifications). */
  readonly revocation: RevocationService;
  readonly pki: {
    /** The one synchronous issuance path every enrollment protocol signs through. */
    readonly enrollment: AcmeEnrollment;
  };
  /** Profile lookups are reused until a write through this counter (`ProfileService.revision`). */
  readonly profiles: { readonly revision: number };
}

export const DEFAULT_ACME_PROFILE_ID = 'prof-default';
export const DEFAULT_ACME_PROFILE_CACHE_MS = 1000;

export interface AcmeServerOptions extends AcmeAccountOptions, AcmeChallengeOptions {
  /** The profile the shorthand `/acme/…` routes serve; default `prof-default`. */
  defaultProfileId?: string;
  /**
   * How long a profile lookup of the ACME routes is reused (default 1000 ms; 0: never). A
   * change through the kernel's profile service is seen at once; one made by another instance
   * within this time.
   */
  profileCacheMs?: number;
}

const servesAcme = (profile: CertificateProfile | null): CertificateProfile | null =>
  profile?.acme.enabled ? profile : null;

/**
 * The ACME server (RFC 8555, RFC 9773): the authority the `/acme` mount calls
 * (`acmeMount({ authority })`), and its parts for the admin routes (accounts, EAB keys) and the
 * validation workers (`challenges.validate`).
 */
export class AcmeServer implements AcmeAuthority {
  readonly accounts: AcmeAccountService;
  readonly orders: AcmeOrderService;
  readonly authorizations: AcmeAuthorizationService;
  readonly challenges: AcmeChallengeService;
  readonly revocation: AcmeRevocationService;
  readonly renewal: AcmeRenewalInfoService;
  /** Every ACME request names its profile: read from storage at most once per time to live. */
  readonly #profiles: RevisionedCache<CertificateProfile | null>;
  readonly #storage: ServiceDeps['storage'];
  readonly #defaultProfileId: string;

  constructor(kernel: AcmeKernel, options: AcmeServerOptions = {}) {
    const { deps } = kernel;
    // Orders and authorizations of one process share what they just wrote (recent.ts).
    const recent = new AcmeRecent(() => deps.clock.now().getTime());
    this.accounts = new AcmeAccountService(deps, kernel.audit, options);
    this.orders = new AcmeOrderService(deps, kernel.pki.enrollment, recent);
    this.authorizations = new AcmeAuthorizationService(deps, options.queue, recent);
    this.challenges = new AcmeChallengeService(deps, options);
    this.revocation = new AcmeRevocationService(deps, kernel.audit, kernel.revocation);
    this.renewal = new AcmeRenewalInfoService(deps);
    this.#storage = deps.storage;
    this.#defaultProfileId = options.defaultProfileId ?? DEFAULT_ACME_PROFILE_ID;
    this.#profiles = new RevisionedCache<CertificateProfile | null>({
      ttlMs: options.profileCacheMs ?? DEFAULT_ACME_PROFILE_CACHE_MS,
      revision: () => kernel.profiles.revision,
    });
  }

  profileForPath(segment: string): Promise<CertificateProfile | null> {
    return this.#profiles.get(`path:${segment}`, async () => {
      const byPath = await this.#storage.profiles.findByPathId('acme', segment);
      if (byPath) return servesAcme(byPath);
      // A profile without a path id is addressed by its id.
      const byId = await this.#storage.profiles.get(segment);
      return byId && byId.acme.path_id === null ? servesAcme(byId) : null;
    });
  }

  defaultProfile(): Promise<CertificateProfile | null> {
    return this.#profiles.get('default', async () =>
      servesAcme(await this.#storage.profiles.get(this.#defaultProfileId)),
    );
  }

  // The endpoints' calls, each answered by the part that implements it under the same name.

  account(id: string): Promise<AcmeAccount | null> {
    return this.accounts.account(id);
  }
  accountByKey(profileId: string, thumbprint: string): Promise<AcmeAccount | null> {
    return this.accounts.accountByKey(profileId, thumbprint);
  }
  createAccount(input: NewAccountRequest): Promise<AcmeAccount> {
    return this.accounts.createAccount(input);
  }
  updateAccount(id: string, patch: { contact: string[] }): Promise<AcmeAccount> {
    return this.accounts.updateAccount(id, patch);
  }
  deactivateAccount(id: string): Promise<AcmeAccount> {
    return this.accounts.deactivateAccount(id);
  }
  changeAccountKey(id: string, change: { oldThumbprint: string; jwk: Record<string, string> }) {
    return this.accounts.changeAccountKey(id, change);
  }
  accountOrderIds(id: string, page: number, perPage: number) {
    return this.accounts.accountOrderIds(id, page, perPage);
  }
  newOrder(account: AcmeAccount, payload: unknown, profile?: CertificateProfile): Promise<AcmeOrderView> {
    return this.orders.newOrder(account, payload, profile);
  }
  order(account: AcmeAccount, id: string): Promise<AcmeOrderView> {
    return this.orders.order(account, id);
  }
  finalize(account: AcmeAccount, id: string, csrDer: Uint8Array): Promise<AcmeOrderView> {
    return this.orders.finalize(account, id, csrDer);
  }
  certificateChain(account: AcmeAccount, orderId: string) {
    return this.orders.certificateChain(account, orderId);
  }
  authorization(account: AcmeAccount, id: string): Promise<AcmeAuthorizationWithChallenges> {
    return this.authorizations.authorization(account, id);
  }
  deactivateAuthorization(account: AcmeAccount, id: string): Promise<AcmeAuthorizationWithChallenges> {
    return this.authorizations.deactivateAuthorization(account, id);
  }
  challenge(account: AcmeAccount, id: string): Promise<AcmeChallengeView> {
    return this.challenges.challenge(account, id);
  }
  respondToChallenge(account: AcmeAccount, id: string): Promise<AcmeChallengeView> {
    return this.challenges.respondToChallenge(account, id);
  }
  revoke(input: AcmeRevokeInput, by: AcmeRevoker): Promise<void> {
    return this.revocation.revoke(input, by);
  }
  renewalInfo(certId: string): Promise<AcmeRenewalInfo> {
    return this.renewal.renewalInfo(certId);
  }
}

/**
 * The ACME server over core's services, built once: its mount answers the wire, the admin
 * routes and the validation workers use the same instance (so its caches see their writes).
 */
export function createAcmeServer(kernel: AcmeKernel, options: AcmeServerOptions = {}): AcmeServer {
  return new AcmeServer(kernel, options);
}
