import type { AuditService, ServiceDeps } from '@certwright/core';
import { type EstIssuance, type EstOptions, EstService } from './enrollment.js';

/** What the EST server takes from core; `Services` (createServices) is one. */
export interface EstKernel {
  readonly deps: ServiceDeps;
  readonly audit: AuditService;
  readonly pki: {
    readonly lifecycle: { caChain(issuerId: string): Promise<string[]> };
    /** The one synchronous issuance path every enrollment protocol signs through. */
    readonly enrollment: EstIssuance;
  };
}

export interface EstServerOptions extends EstOptions {
  /** Issues instead of the kernel's enrollment path (benchmarks, embedders). */
  issuance?: EstIssuance;
}

/**
 * The EST server (RFC 7030) over core's services: the authority the EST mounts call
 * (`estMounts({ authority })`) and the service the admin routes read counters from.
 */
export function createEstServer(kernel: EstKernel, options: EstServerOptions = {}): EstService {
  return new EstService(
    kernel.deps,
    kernel.audit,
    (issuerId) => kernel.pki.lifecycle.caChain(issuerId),
    () => options.issuance ?? kernel.pki.enrollment,
    options,
  );
}
