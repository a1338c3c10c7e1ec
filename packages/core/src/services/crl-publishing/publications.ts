import type { CrlPublication, CrlPublisher } from '../../ports/crl-publisher.js';
import type { AuditService } from '../audit.js';
import { type ServiceDeps, SYSTEM_ACTOR } from '../context.js';
import { reportOutcome } from '../outcomes.js';

/**
 * Hands every regenerated CRL to the configured {@link CrlPublisher}, off the request path:
 * per issuer one publication at a time, in the order the CRLs were built, and never one with
 * a CRL number below what was already published (a slower, older build loses). A failure is
 * retried `attempts` times with growing pauses; the outcome is kept per issuer and kind
 * (this instance's view, see docs/pki.md "Publishing CRLs") and audited as `crl_published` or
 * `crl_publication_failed`.
 */

export interface PublicationOutcome {
  /** The last publication that succeeded. */
  last_published_at: Date | null;
  crl_number: string | null;
  /** The last failure (after its retries), cleared by the next success. */
  last_error: string | null;
  last_error_at: Date | null;
}

export interface IssuerPublicationStatus {
  target: string;
  crl: PublicationOutcome;
  delta: PublicationOutcome;
}

export interface CrlPublicationOptions {
  /** Tries per CRL, the first included; default 3. */
  attempts?: number;
  /** Pause before the second try; doubled before each further one. Default 500 ms. */
  retryDelayMs?: number;
  /** For tests: how to wait. */
  sleep?: (ms: number) => Promise<void>;
}

const empty = (): PublicationOutcome => ({
  last_published_at: null,
  crl_number: null,
  last_error: null,
  last_error_at: null,
});

/**
 * What a failure may say on the API: the error's code (`EACCES`, `ENOSPC` …) and no message,
 * since messages of file and network errors carry paths and hosts.
 */
function publicReason(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,32}$/.test(code)
    ? `publish failed (${code})`
    : 'publish failed';
}

export class CrlPublications {
  readonly #status = new Map<string, IssuerPublicationStatus>();
  readonly #queues = new Map<string, Promise<void>>();
  readonly #attempts: number;
  readonly #retryDelayMs: number;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
    readonly publisher: CrlPublisher,
    options: CrlPublicationOptions = {},
  ) {
    this.#attempts = Math.max(1, options.attempts ?? 3);
    this.#retryDelayMs = options.retryDelayMs ?? 500;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms).unref?.()));
  }

  /** Queues a publication behind the issuer's earlier ones; never rejects. */
  enqueue(publication: CrlPublication): Promise<void> {
    const previous = this.#queues.get(publication.issuerId) ?? Promise.resolve();
    const next = previous.then(() => this.#publish(publication));
    this.#queues.set(publication.issuerId, next);
    void next.then(() => {
      if (this.#queues.get(publication.issuerId) === next) this.#queues.delete(publication.issuerId);
    });
    return next;
  }

  /** Resolves once every publication queued so far has finished (for shutdown and tests). */
  async settled(): Promise<void> {
    while (this.#queues.size > 0) await Promise.all([...this.#queues.values()]);
  }

  status(issuerId: string): IssuerPublicationStatus {
    return this.#status.get(issuerId) ?? { target: this.publisher.target, crl: empty(), delta: empty() };
  }

  async #publish(publication: CrlPublication): Promise<void> {
    const status = this.status(publication.issuerId);
    this.#status.set(publication.issuerId, status);
    const outcome = status[publication.kind];
    if (outcome.crl_number !== null && BigInt(outcome.crl_number) >= publication.crlNumber) return;
    let lastError: unknown;
    for (let attempt = 1; attempt <= this.#attempts; attempt++) {
      try {
        await this.publisher.publish(publication);
        outcome.last_published_at = this.deps.clock.now();
        outcome.crl_number = publication.crlNumber.toString();
        outcome.last_error = null;
        outcome.last_error_at = null;
        await this.#record('crl_published', publication, { attempts: attempt });
        this.#report(publication, 'success');
        return;
      } catch (error) {
        lastError = error;
        if (attempt < this.#attempts) await this.#sleep(this.#retryDelayMs * 2 ** (attempt - 1));
      }
    }
    outcome.last_error = publicReason(lastError);
    outcome.last_error_at = this.deps.clock.now();
    this.deps.logger.error(
      { err: lastError, issuer_id: publication.issuerId, kind: publication.kind },
      'CRL publication failed after retries',
    );
    await this.#record('crl_publication_failed', publication, {
      attempts: this.#attempts,
      error: outcome.last_error,
    });
    this.#report(publication, 'failure');
  }

  #report(publication: CrlPublication, outcome: 'success' | 'failure'): void {
    reportOutcome(this.deps, {
      kind: 'crl_publication',
      issuerId: publication.issuerId,
      crl: publication.kind,
      outcome,
    });
  }

  async #record(
    action: string,
    publication: CrlPublication,
    details: Record<string, unknown>,
  ): Promise<void> {
    try {
      await this.audit.record(SYSTEM_ACTOR, {
        action,
        category: 'cert_lifecycle',
        resource_type: 'issuer',
        resource_id: publication.issuerId,
        details: {
          kind: publication.kind,
          crl_number: publication.crlNumber.toString(),
          target: this.publisher.target,
          ...details,
        },
      });
    } catch (error) {
      // The CRL is out; an audit trail that cannot take the event is reported, not retried here.
      this.deps.logger.error(
        { err: error, issuer_id: publication.issuerId },
        'could not audit a CRL publication',
      );
    }
  }
}
