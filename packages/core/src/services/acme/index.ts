import type { AuditService } from '../audit.js';
import type { ServiceDeps } from '../context.js';
import type { RevocationService } from '../revocation.js';
import { AcmeAccountService } from './accounts.js';
import { AcmeAuthorizationService } from './authorizations.js';
import { type AcmeChallengeOptions, AcmeChallengeService } from './challenges.js';
import type { AcmeEnrollment } from './common.js';
import { AcmeOrderService } from './orders.js';
import { AcmeRecent } from './recent.js';
import { AcmeRenewalInfoService } from './renewal-info.js';
import { AcmeRevocationService } from './revoke.js';

export * from '../../pki/acme-cert-id.js';
export * from './accounts.js';
export * from './authorizations.js';
export * from './challenges.js';
export * from './common.js';
export * from './identifiers.js';
export { findByCertId, findByDer, resolveReplaces } from './issued.js';
export * from './orders.js';
export * from './renewal-info.js';
export * from './revoke.js';
export * from './validation-queue.js';

/** The ACME server's domain services, reachable in-process as `services.acme`. */
export interface AcmeServices {
  readonly accounts: AcmeAccountService;
}

export function createAcmeServices(deps: ServiceDeps, audit: AuditService): AcmeServices {
  return { accounts: new AcmeAccountService(deps, audit) };
}

/** The order side of the ACME server: orders, authorizations, challenges, revocation, ARI. */
export interface AcmeOrderServices {
  readonly orders: AcmeOrderService;
  readonly authorizations: AcmeAuthorizationService;
  readonly challenges: AcmeChallengeService;
  readonly revocation: AcmeRevocationService;
  readonly renewalInfo: AcmeRenewalInfoService;
}

export type AcmeOrderOptions = AcmeChallengeOptions;

export function createAcmeOrderServices(
  deps: ServiceDeps,
  parts: { audit: AuditService; revocation: RevocationService; enrollment: AcmeEnrollment },
  options: AcmeOrderOptions = {},
): AcmeOrderServices {
  const recent = new AcmeRecent(() => deps.clock.now().getTime());
  return {
    orders: new AcmeOrderService(deps, parts.enrollment, recent),
    authorizations: new AcmeAuthorizationService(deps, options.queue, recent),
    challenges: new AcmeChallengeService(deps, options),
    revocation: new AcmeRevocationService(deps, parts.audit, parts.revocation),
    renewalInfo: new AcmeRenewalInfoService(deps),
  };
}
