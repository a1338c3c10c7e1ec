import {
  type AcmeChallengeType,
  CertwrightError,
  type DeliveryJob,
  type JobContext,
  type Logger,
  NOTIFICATION_DELIVERY_TOPIC,
  type Queue,
  type QueueWorker,
  type Services,
} from '@certwright/core';
import {
  ACME_VALIDATION_TOPICS,
  type AcmeChallengeService,
  type AcmeValidationJob,
  type ChallengeValidator,
} from '@certwright/protocols/acme';

/**
 * One kind of asynchronous work the server runs from its Queue (docs/architecture.md,
 * "Asynchronous work"): a topic, its handler, and how many of its jobs one instance runs at
 * once. Handlers must be idempotent: delivery is at-least-once.
 */
export interface WorkTopic<P = unknown> {
  topic: string;
  /** Jobs of this topic running at once in one instance (a bounded pool per topic). */
  concurrency: number;
  /** Lease per delivery; the worker extends it while the handler runs. */
  leaseMs: number;
  handle(payload: P, context: JobContext<P>): Promise<void>;
}

/**
 * Every topic the server works on. A protocol or feature adds its entry here, e.g. one topic
 * per ACME challenge type with its own concurrency; the enqueueing side lives with the service
 * that raises the work.
 */
export interface WorkTopicOptions {
  /** ACME challenge validation: absent → no validation topics (nothing validates challenges). */
  acmeValidation?: {
    /** The ACME server's challenges (the handler's `servers.acme`), which record each outcome. */
    challenges: Pick<AcmeChallengeService, 'validate'>;
    validator: ChallengeValidator;
    /** Validations of each type running at once in one instance. */
    concurrency: Record<AcmeChallengeType, number>;
  };
}

/**
 * A validation holds its worker for at most the 30 s challenge deadline; the lease is longer,
 * so only a dead worker (which stops extending it) hands the job to another instance.
 */
const ACME_VALIDATION_LEASE_MS = 120_000;

export function workTopics(services: Services, options: WorkTopicOptions = {}): WorkTopic[] {
  const notificationDelivery: WorkTopic<DeliveryJob> = {
    topic: NOTIFICATION_DELIVERY_TOPIC,
    // Mail servers answer within seconds; a few in parallel keep a burst of events moving.
    concurrency: 4,
    leaseMs: 60_000,
    handle: async (job) => {
      await services.notifications.deliver(job.id);
    },
  };
  const topics = [notificationDelivery as WorkTopic];
  const acme = options.acmeValidation;
  if (acme) {
    for (const [type, topic] of Object.entries(ACME_VALIDATION_TOPICS) as [AcmeChallengeType, string][]) {
      const validation: WorkTopic<AcmeValidationJob> = {
        topic,
        concurrency: acme.concurrency[type],
        leaseMs: ACME_VALIDATION_LEASE_MS,
        handle: async (job, { signal }) => {
          await acme.challenges.validate(job.id, acme.validator, signal);
        },
      };
      topics.push(validation as WorkTopic);
    }
  }
  return topics;
}

export interface WorkerHost {
  /** SIGTERM: stop claiming, let running handlers finish and record their outcome. */
  stop(): Promise<void>;
}

/** Starts one queue worker per topic, each with its own concurrency. */
export function startWorkers(
  queue: Queue,
  topics: readonly WorkTopic[],
  logger: Logger,
  options: { pollIntervalMs?: number } = {},
): WorkerHost {
  const names = new Set<string>();
  for (const { topic } of topics) {
    if (names.has(topic))
      throw new CertwrightError('config_invalid', `queue topic '${topic}' is registered twice`);
    names.add(topic);
  }
  const workers: QueueWorker[] = topics.map((t) =>
    queue.work(t.topic, t.handle, {
      concurrency: t.concurrency,
      leaseMs: t.leaseMs,
      logger,
      ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
    }),
  );
  logger.info(
    { topics: Object.fromEntries(topics.map((t) => [t.topic, t.concurrency])) },
    'queue workers started',
  );
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= Promise.all(workers.map((w) => w.stop())).then(() => {});
      return stopping;
    },
  };
}
