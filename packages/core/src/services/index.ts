import { MemoryEphemeralStore } from '../ephemeral/memory-ephemeral-store.js';
import { type AcmeConnectorDeps, defaultIssuerConnectors, ephemeralHttp01Store } from '../issuers/index.js';
import { AgentService } from './agents.js';
import { AuditService } from './audit.js';
import { BreakglassService, type BreakglassSettings } from './breakglass.js';
import { BulkService } from './bulk.js';
import { CertificateService } from './certificates.js';
import type { ServiceDeps } from './context.js';
import { DashboardService } from './dashboard.js';
import { type DiscoveryOptions, DiscoveryService } from './discovery.js';
import { type HealthCheckOptions, HealthCheckService } from './health-checks.js';
import { IssuerService } from './issuers.js';
import { JobService } from './jobs.js';
import { NameService } from './names.js';
import { NotificationService } from './notifications.js';
import { OwnerService } from './owners.js';
import { PeopleService } from './people.js';
import { createPkiServices, type PkiOptions, type PkiServices } from './pki.js';
import { PolicyEvaluationService, PolicyRuleService, ViolationService } from './policies.js';
import { ProfileService } from './profiles.js';
import { RenewalPolicyService } from './renewal-policies.js';
import { type RevocationListener, RevocationService } from './revocation.js';
import { type ScepProbeOptions, ScepProbeService } from './scep-probe/index.js';
import { SessionService, type SessionSettings } from './sessions.js';
import { TargetService } from './targets.js';
import { TeamService } from './teams.js';
import { WebhookNotificationService, type WebhookServiceOptions } from './webhooks.js';

/** Every service of the domain, built once from the same dependencies. */
export interface Services {
  readonly deps: ServiceDeps;
  readonly audit: AuditService;
  readonly agents: AgentService;
  readonly targets: TargetService;
  readonly jobs: JobService;
  readonly notifications: NotificationService;
  /** Webhook targets of alert notifications, their test action and the private-range allowlist. */
  readonly webhooks: WebhookNotificationService;
  readonly certificates: CertificateService;
  /** Dashboard figures: expiry timeline, certificates by issuer and team, renewals this week. */
  readonly dashboard: DashboardService;
  readonly issuers: IssuerService;
  readonly owners: OwnerService;
  /** Names of related records by id, several kinds in one call. */
  readonly names: NameService;
  readonly teams: TeamService;
  readonly profiles: ProfileService;
  readonly renewalPolicies: RenewalPolicyService;
  readonly policyRules: PolicyRuleService;
  readonly violations: ViolationService;
  readonly policyEvaluation: PolicyEvaluationService;
  readonly revocation: RevocationService;
  readonly bulk: BulkService;
  /** Issuing, renewal, export, CRL and OCSP (issuer connectors). */
  readonly pki: PkiServices;
  /** SCEP probes: GetCACaps and GetCACert of a named server, through the address guard. */
  readonly scepProbes: ScepProbeService;
  /** Network scan targets, scans and discovered certificates. */
  readonly discovery: DiscoveryService;
  /** TLS endpoint health checks. */
  readonly healthChecks: HealthCheckService;
  /** Users, roles and OIDC group mappings. */
  readonly people: PeopleService;
  /** Server-side sessions of signed-in users. */
  readonly sessions: SessionService;
  /** Break-glass local credentials (off unless enabled). */
  readonly breakglass: BreakglassService;
}

/** What createServices accepts beyond the shared dependencies. */
export interface ServiceOptions {
  /** Told after each committed revocation (CRL/OCSP refresh hooks in here). */
  revocationListeners?: readonly RevocationListener[];
  /** Issuing options: public base URL for CDP/AIA, connector registry, cache lifetimes. */
  pki?: PkiOptions;
  /**
   * The ACME issuer connector (docs/api/issuers.md): outbound client, DNS providers. Its http-01
   * answers go to the ephemeral store, where `/.well-known/acme-challenge/` reads them.
   */
  acmeIssuer?: AcmeConnectorDeps;
  /** SCEP probes: the guarded client, timeout, body cap (docs/protocols/scep-probe.md). */
  scepProbe?: ScepProbeOptions;
  /** Webhooks: resolver, timeouts, `.Instance`/`.Node` of alerts (docs/notifications/webhooks.md). */
  webhooks?: WebhookServiceOptions;
  /** Network scans: the guarded client, concurrency, timeouts (docs/api/discovery.md). */
  discovery?: DiscoveryOptions;
  /** Endpoint health checks: the guarded client, timeout, concurrency, history retention. */
  healthChecks?: HealthCheckOptions;
  /** Session lifetimes and binding (`SVC_SESSION_*`). */
  sessions?: Partial<SessionSettings>;
  /** Break-glass credentials (`SVC_BREAKGLASS_*`); disabled by default. */
  breakglass?: Partial<BreakglassSettings>;
}

export function createServices(given: ServiceDeps, options: ServiceOptions = {}): Services {
  const deps: ServiceDeps = {
    ...given,
    ephemeral: given.ephemeral ?? new MemoryEphemeralStore({ clock: given.clock }),
  };
  // One registry for issuing and for issuer updates: it says which config keys are state.
  const connectors =
    options.pki?.connectors ??
    defaultIssuerConnectors({
      acme: { http01: ephemeralHttp01Store(deps.ephemeral!), logger: deps.logger, ...options.acmeIssuer },
    });
  const pkiOptions: PkiOptions = { ...options.pki, connectors };
  const audit = new AuditService(deps);
  // One notification service for every certificate notification (renewal, expiry,
  // deployment, revocation).
  const notifications = new NotificationService(deps, audit);
  const revocation = new RevocationService(deps, audit, notifications, options.revocationListeners);
  const policyEvaluation = new PolicyEvaluationService(deps);
  const jobs = new JobService(deps, audit, notifications);
  const profiles = new ProfileService(deps, audit);
  const policyRules = new PolicyRuleService(deps, audit);
  const issuers = new IssuerService(deps, audit, connectors);
  const pki = createPkiServices(
    deps,
    {
      audit,
      jobs,
      notifications,
      policyEvaluation,
      revocation,
      // Enrollment reuses profile and rule reads until a write through these services.
      revisions: {
        profileRevision: () => profiles.revision,
        policyRuleRevision: () => policyRules.revision,
        // Signatures reuse issuer reads likewise (signing.ts).
        issuerRevision: () => issuers.revision,
      },
    },
    pkiOptions,
  );
  const people = new PeopleService(deps, audit);
  const sessions = new SessionService(deps, audit, people, options.sessions);
  return {
    deps,
    audit,
    agents: new AgentService(deps, audit, jobs),
    targets: new TargetService(deps, audit),
    jobs,
    notifications,
    webhooks: new WebhookNotificationService(deps, audit, notifications, options.webhooks),
    certificates: new CertificateService(deps, audit, policyEvaluation, revocation),
    dashboard: new DashboardService(deps),
    issuers,
    owners: new OwnerService(deps, audit),
    names: new NameService(deps),
    teams: new TeamService(deps, audit),
    profiles,
    renewalPolicies: new RenewalPolicyService(deps, audit),
    policyRules,
    violations: new ViolationService(deps),
    policyEvaluation,
    revocation,
    bulk: new BulkService(deps, audit, revocation, pki.lifecycle.jobOpener),
    pki,
    scepProbes: new ScepProbeService(deps, options.scepProbe),
    discovery: new DiscoveryService(deps, audit, options.discovery),
    healthChecks: new HealthCheckService(deps, audit, notifications, options.healthChecks),
    people,
    sessions,
    breakglass: new BreakglassService(deps, audit, sessions, options.breakglass),
  };
}
