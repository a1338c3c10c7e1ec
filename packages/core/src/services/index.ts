import { AgentService } from './agents.js';
import { AuditService } from './audit.js';
import type { ServiceDeps } from './context.js';
import { JobService } from './jobs.js';
import { NotificationService } from './notifications.js';
import { TargetService } from './targets.js';

export * from './agents.js';
export {
  AUDIT_EXPORT_MAX_LIMIT,
  AUDIT_EXPORT_MAX_RANGE_MS,
  type AuditChainReport,
  type AuditEntry,
  type AuditExportQuery,
  AuditService,
} from './audit.js';
export {
  type Actor,
  type AgentSettings,
  DEFAULT_AGENT_SETTINGS,
  type NotificationDeps,
  type ServiceDeps,
  SYSTEM_ACTOR,
} from './context.js';
export * from './jobs.js';
export * from './notifications.js';
export * from './targets.js';

/** Every service of the domain, built once from the same dependencies. */
export interface Services {
  readonly deps: ServiceDeps;
  readonly audit: AuditService;
  readonly agents: AgentService;
  readonly targets: TargetService;
  readonly jobs: JobService;
  readonly notifications: NotificationService;
}

export function createServices(deps: ServiceDeps): Services {
  const audit = new AuditService(deps);
  const jobs = new JobService(deps, audit);
  return {
    deps,
    audit,
    agents: new AgentService(deps, audit, jobs),
    targets: new TargetService(deps, audit),
    jobs,
    notifications: new NotificationService(deps, audit),
  };
}
