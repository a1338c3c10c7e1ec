import type { AcmeAccount, AcmeChallenge, AcmeProblem, Queue, ServiceDeps } from '@certwright/core';
import { fail, isCertwrightError, publicMessage } from '@certwright/core';
import type { ChallengeValidator } from '../validation/types.js';
import type { AcmeOrderAuthority } from '../wire/order-authority.js';
import { advanceOrder } from './authorizations.js';
import { type AcmeChallengeView, challengeView, effectiveAuthorizationStatus, ownedBy } from './common.js';
import { enqueueValidation, requeueStaleValidations } from './validation-queue.js';

/**
 * Proves one challenge or rejects with a CertwrightError whose reason says why; the validator
 * owns the per-challenge deadline (30 s). `createChallengeValidator` (`validation/`) is the
 * real one; tests inject their own.
 */
export type AcmeChallengeValidator = ChallengeValidator;

/**
 * The RFC 8555 §6.7 problem a failed validation stores: the four failure classes clients see
 * (`connection`, `dns`, `tls`, `incorrectResponse`), or `serverInternal` for a fault of ours.
 */
export function validationProblem(error: unknown): AcmeProblem {
  const reason: string = isCertwrightError(error) ? error.reason : '';
  const detail = publicMessage(error, 512);
  switch (reason) {
    case 'dns_failed':
      return { type: 'dns', detail };
    case 'tls_failed':
      return { type: 'tls', detail };
    case 'incorrect_response':
    case 'response_too_large':
      return { type: 'incorrectResponse', detail };
    case 'address_refused':
    case 'connection_failed':
    case 'timed_out':
    case 'redirect_refused':
      return { type: 'connection', detail };
    default:
      return { type: 'serverInternal', detail };
  }
}

export interface AcmeChallengeOptions {
  /** Where validation jobs go; absent → responding to a challenge is `unavailable`. */
  queue?: Pick<Queue, 'enqueue'>;
}

/**
 * Challenges of the ACME server (RFC 8555 §7.5.1): a client's response moves a challenge to
 * `processing` at once and enqueues its validation after the commit; the topic handler
 * (`validate`) proves it and moves challenge, authorization and order on.
 */
export class AcmeChallengeService implements Pick<AcmeOrderAuthority, 'challenge' | 'respondToChallenge'> {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly options: AcmeChallengeOptions = {},
  ) {}

  async challenge(account: AcmeAccount, id: string): Promise<AcmeChallengeView> {
    const view = await this.#owned(account, id);
    requeueStaleValidations(this.deps, this.options.queue, [view.challenge]);
    return view;
  }

  async #owned(account: AcmeAccount, id: string): Promise<AcmeChallengeView> {
    const { storage } = this.deps;
    const challenge = await storage.acmeChallenges.get(id);
    const authz = ownedBy(
      challenge ? await storage.acmeAuthorizations.get(challenge.authorization_id) : null,
      account,
      'ACME challenge',
      id,
    );
    return challengeView(challenge as AcmeChallenge, authz);
  }

  /**
   * The client says it is ready (RFC 8555 §7.5.1). A pending challenge becomes `processing`
   * and its validation is enqueued; a challenge already past `pending` is answered as it is,
   * so a repeated POST changes nothing. Refused (`invalid_state`) when the authorization is no
   * longer pending or another of its challenges is already being validated.
   */
  async respondToChallenge(account: AcmeAccount, id: string): Promise<AcmeChallengeView> {
    const { storage, clock } = this.deps;
    const queue = this.options.queue;
    if (!queue) throw fail('unavailable', 'challenge validation is not configured on this server');
    await this.#owned(account, id);
    return storage.transaction(async (tx) => {
      const challenge0 = await tx.acmeChallenges.get(id);
      const authz = await tx.acmeAuthorizations.lockForUpdate((challenge0 as AcmeChallenge).authorization_id);
      const challenge = await tx.acmeChallenges.lockForUpdate(id);
      if (challenge.status !== 'pending') return challengeView(challenge, authz);
      const status = effectiveAuthorizationStatus(authz, clock.now());
      if (status !== 'pending') throw fail('invalid_state', `authorization '${authz.id}' is ${status}`);
      const siblings = (await tx.acmeAuthorizations.get(authz.id))?.challenges ?? [];
      if (siblings.some((c) => c.id !== id && c.status !== 'pending'))
        throw fail(
          'invalid_state',
          `another challenge of authorization '${authz.id}' is already being validated`,
        );
      const processing = await tx.acmeChallenges.update(id, { status: 'processing' });
      tx.afterCommit(() => enqueueValidation(this.deps, queue, processing));
      return challengeView(processing, authz);
    });
  }

  /**
   * The handler of the validation topics: proves a `processing` challenge with `validator` and
   * records the outcome under row locks (order, authorization, challenge — the lock order of
   * every ACME writer). Idempotent: a challenge no longer processing is left alone, so a
   * repeated delivery changes nothing. A stop of the worker (`signal`) leaves the challenge
   * processing and rethrows, so the job is delivered again.
   */
  async validate(id: string, validator: AcmeChallengeValidator, signal?: AbortSignal): Promise<void> {
    const { storage, clock, logger } = this.deps;
    const challenge = await storage.acmeChallenges.get(id);
    if (!challenge || challenge.status !== 'processing') return;
    const authz = await storage.acmeAuthorizations.get(challenge.authorization_id);
    if (!authz) return;
    const account = await storage.acmeAccounts.get(authz.account_id);

    let problem: AcmeProblem | null = null;
    if (!account || account.status !== 'valid') {
      problem = { type: 'unauthorized', detail: 'the account is no longer valid' };
    } else if (effectiveAuthorizationStatus(authz, clock.now()) !== 'pending') {
      problem = { type: 'unauthorized', detail: 'the authorization expired before it was validated' };
    } else {
      const { identifier } = authz;
      try {
        await validator(
          {
            type: challenge.type,
            // As in the order: a wildcard keeps its '*.' (its dns-01 label drops it again).
            identifier: authz.wildcard ? { type: 'dns', value: `*.${identifier.value}` } : identifier,
            token: challenge.token,
            keyAuthorization: `${challenge.token}.${account.jwk_thumbprint}`,
          },
          signal,
        );
      } catch (error) {
        if (signal?.aborted) throw error;
        problem = validationProblem(error);
        if (problem.type === 'serverInternal')
          logger.error(
            { err: error, acme_challenge_id: id },
            'ACME challenge validation failed unexpectedly',
          );
      }
    }

    await storage.transaction(async (tx) => {
      const order = await tx.acmeOrders.lockForUpdate(authz.order_id);
      const lockedAuthz = await tx.acmeAuthorizations.lockForUpdate(authz.id);
      const locked = await tx.acmeChallenges.lockForUpdate(id);
      if (locked.status !== 'processing') return;
      const now = clock.now();
      if (problem) {
        await tx.acmeChallenges.update(id, { status: 'invalid', error: problem });
        if (lockedAuthz.status === 'pending')
          await tx.acmeAuthorizations.update(authz.id, { status: 'invalid' });
      } else {
        await tx.acmeChallenges.update(id, { status: 'valid', validated_at: now });
        if (lockedAuthz.status === 'pending')
          await tx.acmeAuthorizations.update(authz.id, { status: 'valid' });
      }
      await advanceOrder(tx, order, now);
    });
  }
}
