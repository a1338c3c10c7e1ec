import type { ServiceDeps } from './context.js';

/**
 * What settled in this process: an issuance or renewal attempt, revocations, an enrollment. The
 * server counts them per instance (docs/operations/observability.md, "Counters"); reported only
 * after the change committed (or failed), never for a rolled-back one.
 */
export type LifecycleOutcome =
  | {
      kind: 'issuance' | 'renewal' | 'revocation';
      issuerId: string;
      outcome: 'success' | 'failure';
      /** Certificates it concerns (a revocation may take many at once); default 1. */
      count?: number;
    }
  | { kind: 'enrollment'; protocol: 'acme' | 'est' | 'scep'; outcome: 'success' | 'failure' }
  | {
      /** A CRL this process built and signed: a complete one (`crl`) or a delta. */
      kind: 'crl_built';
      issuerId: string;
      crl: 'crl' | 'delta';
      bytes: number;
      thisUpdate: Date;
      nextUpdate: Date;
    }
  | {
      /** A built CRL handed to the publishing target, after its retries. */
      kind: 'crl_publication';
      issuerId: string;
      crl: 'crl' | 'delta';
      outcome: 'success' | 'failure';
    };

/** Calls the embedder's hook; a hook that throws costs a log line, never the operation. */
export function reportOutcome(deps: ServiceDeps, event: LifecycleOutcome): void {
  if (!deps.onOutcome) return;
  try {
    deps.onOutcome(event);
  } catch (error) {
    deps.logger.warn({ err: error, kind: event.kind }, 'the outcome hook threw');
  }
}
