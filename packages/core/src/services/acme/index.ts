import type { AuditService } from '../audit.js';
import type { ServiceDeps } from '../context.js';
import { AcmeAccountService } from './accounts.js';

export * from './accounts.js';

/** The ACME server's domain services, reachable in-process as `services.acme`. */
export interface AcmeServices {
  readonly accounts: AcmeAccountService;
}

export function createAcmeServices(deps: ServiceDeps, audit: AuditService): AcmeServices {
  return { accounts: new AcmeAccountService(deps, audit) };
}
