import { AuditService } from './audit.js';
import type { ServiceDeps } from './context.js';

export { type AuditEntry, AuditService } from './audit.js';
export { type Actor, type ServiceDeps, SYSTEM_ACTOR } from './context.js';

/** Every service of the domain, built once from the same dependencies. */
export interface Services {
  readonly deps: ServiceDeps;
  readonly audit: AuditService;
}

export function createServices(deps: ServiceDeps): Services {
  return {
    deps,
    audit: new AuditService(deps),
  };
}
