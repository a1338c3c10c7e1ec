import { AuditService } from './audit.js';
import { BulkService } from './bulk.js';
import { CertificateService } from './certificates.js';
import type { ServiceDeps } from './context.js';
import { IssuerService } from './issuers.js';
import { OwnerService } from './owners.js';
import { PolicyEvaluationService, PolicyRuleService, ViolationService } from './policies.js';
import { ProfileService } from './profiles.js';
import { RenewalPolicyService } from './renewal-policies.js';
import { type RevocationListener, RevocationService } from './revocation.js';
import { TeamService } from './teams.js';

export * from './bulk.js';
export * from './certificates.js';
export * from './issuers.js';
export { invalidReference, type ListPage, type Paged, parseInput, stillReferenced } from './input.js';
export * from './owners.js';
export { pageQuerySchema } from './paging.js';
export * from './policies.js';
export * from './profiles.js';
export * from './renewal-policies.js';
export * from './revocation.js';
export * from './teams.js';
export * from '../policy/index.js';

export { type AuditEntry, AuditService } from './audit.js';
export { type Actor, type ServiceDeps, SYSTEM_ACTOR } from './context.js';

/** Every service of the domain, built once from the same dependencies. */
export interface Services {
  readonly deps: ServiceDeps;
  readonly audit: AuditService;
  readonly certificates: CertificateService;
  readonly issuers: IssuerService;
  readonly owners: OwnerService;
  readonly teams: TeamService;
  readonly profiles: ProfileService;
  readonly renewalPolicies: RenewalPolicyService;
  readonly policyRules: PolicyRuleService;
  readonly violations: ViolationService;
  readonly policyEvaluation: PolicyEvaluationService;
  readonly revocation: RevocationService;
  readonly bulk: BulkService;
}

/** What createServices accepts beyond the shared dependencies. */
export interface ServiceOptions {
  /** Told after each committed revocation (CRL/OCSP refresh hooks in here). */
  revocationListeners?: readonly RevocationListener[];
}

export function createServices(deps: ServiceDeps, options: ServiceOptions = {}): Services {
  const audit = new AuditService(deps);
  const revocation = new RevocationService(deps, audit, options.revocationListeners);
  const policyEvaluation = new PolicyEvaluationService(deps);
  return {
    deps,
    audit,
    certificates: new CertificateService(deps, audit, policyEvaluation, revocation),
    issuers: new IssuerService(deps, audit),
    owners: new OwnerService(deps, audit),
    teams: new TeamService(deps, audit),
    profiles: new ProfileService(deps, audit),
    renewalPolicies: new RenewalPolicyService(deps, audit),
    policyRules: new PolicyRuleService(deps, audit),
    violations: new ViolationService(deps),
    policyEvaluation,
    revocation,
    bulk: new BulkService(deps, audit, revocation),
  };
}
