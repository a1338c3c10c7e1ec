import type { AcmeChallenge, AcmeChallengeType, Queue, ServiceDeps } from '@certwright/core';

/** One Queue topic per challenge type, each with its own worker pool (docs/architecture.md). */
export const ACME_VALIDATION_TOPICS: Readonly<Record<AcmeChallengeType, string>> = Object.freeze({
  'http-01': 'acme.validate.http-01',
  'dns-01': 'acme.validate.dns-01',
  'tls-alpn-01': 'acme.validate.tls-alpn-01',
});

/** The payload of a validation job: ids only (queue payloads are stored in clear). */
export interface AcmeValidationJob {
  id: string;
}

/**
 * A challenge still `processing` this long after its last change has lost its job (the process
 * died between commit and enqueue, or the queue was unreachable): reading it enqueues the
 * validation again. Clients poll a processing challenge or its authorization, so this is the
 * topic's safety net without a scan; the dedupe key keeps a live job from being doubled.
 */
export const ACME_VALIDATION_STALE_MS = 60_000;

/** Enqueues the validation of `challenge`; a failure is logged (the stale re-enqueue recovers it). */
export function enqueueValidation(
  deps: ServiceDeps,
  queue: Pick<Queue, 'enqueue'>,
  challenge: Pick<AcmeChallenge, 'id' | 'type'>,
): void {
  queue
    .enqueue<AcmeValidationJob>(
      ACME_VALIDATION_TOPICS[challenge.type],
      { id: challenge.id },
      { dedupeKey: challenge.id },
    )
    .catch((error: unknown) => {
      deps.logger.error({ err: error, acme_challenge_id: challenge.id }, 'could not enqueue ACME validation');
    });
}

/** Re-enqueues the validations of stale `processing` challenges (see {@link ACME_VALIDATION_STALE_MS}). */
export function requeueStaleValidations(
  deps: ServiceDeps,
  queue: Pick<Queue, 'enqueue'> | undefined,
  challenges: readonly AcmeChallenge[],
): void {
  if (!queue) return;
  const now = deps.clock.now().getTime();
  for (const c of challenges) {
    if (c.status === 'processing' && now - c.updated_at.getTime() >= ACME_VALIDATION_STALE_MS)
      enqueueValidation(deps, queue, c);
  }
}
