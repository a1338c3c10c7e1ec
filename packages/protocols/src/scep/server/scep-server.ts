import type { AuditService, IssuerConnector, ServiceDeps } from '@certwright/core';
import { type ScepMdmOptions, ScepMdmService } from './mdm/service.js';
import { type ScepIssuance, type ScepOptions, ScepService } from './service.js';

/** What the SCEP server takes from core; `Services` (createServices) is one. */
export interface ScepKernel {
  readonly deps: ServiceDeps;
  readonly audit: AuditService;
  readonly pki: {
    readonly lifecycle: {
      caChain(issuerId: string): Promise<string[]>;
      readonly connectors: { require(issuerId: string): Promise<IssuerConnector> };
    };
    /** The one synchronous issuance path every enrollment protocol signs through. */
    readonly enrollment: ScepIssuance;
  };
  /** Profile lookups are reused until a write through this counter (`ProfileService.revision`). */
  readonly profiles: { readonly revision: number };
}

export interface ScepServerOptions extends ScepOptions {
  /** Issues instead of the kernel's enrollment path (benchmarks, embedders). */
  issuance?: ScepIssuance;
  /** Device-management challenges: root profile, clock skew, per-device failure limit. */
  mdm?: ScepMdmOptions;
}

/** The SCEP server: PKIOperation and its RA, and the device-management challenges it checks. */
export interface ScepServer {
  /** The authority the SCEP mounts call (`scepMounts({ authority })`); snapshots for the admin routes. */
  readonly scep: ScepService;
  /** Signed device-management challenges: checks, counters, trust anchors (docs/protocols/scep-mdm.md). */
  readonly mdm: ScepMdmService;
}

export function createScepServer(kernel: ScepKernel, options: ScepServerOptions = {}): ScepServer {
  const { issuance, mdm: mdmOptions, ...scepOptions } = options;
  const scep = new ScepService(
    kernel.deps,
    kernel.audit,
    (issuerId) => kernel.pki.lifecycle.caChain(issuerId),
    (issuerId) => kernel.pki.lifecycle.connectors.require(issuerId),
    () => issuance ?? kernel.pki.enrollment,
    { profileRevision: () => kernel.profiles.revision, ...scepOptions },
  );
  const mdm = new ScepMdmService(kernel.deps, kernel.audit, {
    ...(options.defaultProfileId ? { defaultProfileId: options.defaultProfileId } : {}),
    ...mdmOptions,
  });
  // Profiles with scep.mdm.enabled check their challenges here unless the embedder brings its own.
  if (!options.mdmVerifier) scep.setMdmVerifier(mdm.scepVerifier());
  return { scep, mdm };
}
