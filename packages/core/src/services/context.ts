import type { ActorType } from '../domain/audit.js';
import type { NotificationEvent } from '../domain/notification.js';
import type { NotificationChannelRegistry } from '../notify/channel.js';
import type { Clock } from '../ports/clock.js';
import type { EphemeralStore } from '../ports/ephemeral.js';
import type { KeyCustody } from '../ports/key-custody.js';
import type { Logger } from '../ports/logger.js';
import type { Queue } from '../ports/queue.js';
import type { Storage } from '../ports/storage.js';
import type { LifecycleOutcome } from './outcomes.js';

/** Who performs an operation; recorded on every audit event it causes. */
export interface Actor {
  type: ActorType;
  id: string;
}

/** Scheduled work (renewal scans, retry sweeps) acts as the system. */
export const SYSTEM_ACTOR: Actor = Object.freeze({ type: 'system', id: 'system' });

/** What every service is built from. Services never reach for globals. */
export interface ServiceDeps {
  storage: Storage;
  clock: Clock;
  logger: Logger;
  /** Agent liveness thresholds and job timeouts; defaults in `DEFAULT_AGENT_SETTINGS`. */
  agentSettings?: Partial<AgentSettings>;
  /** Notification delivery: the channels of this process and the dead-letter hook. */
  notifications?: NotificationDeps;
  /**
   * State shared by every instance on the same database (CRL/OCSP cache invalidation after a
   * revocation). Absent → createServices uses an in-process MemoryEphemeralStore on `clock`,
   * right for one instance; several instances must pass one shared store (Redis).
   */
  ephemeral?: EphemeralStore;
  /** Randomness for values that are not secrets (lease holder names); default node:crypto. */
  random?: RandomSource;
  /**
   * Names this process on the job leases it holds (`locked_by`); default `worker-<12 hex>`
   * drawn from `random` once per service instance.
   */
  workerId?: string;
  /**
   * Hardware key custody (PKCS#11) for Local CAs configured with `key_custody: pkcs11`; software
   * keys need none.
   */
  keyCustody?: KeyCustody;
  /**
   * Told once each issuance or renewal attempt, revocation or enrollment has settled (the
   * server's per-instance counters); see {@link LifecycleOutcome}.
   */
  onOutcome?: (event: LifecycleOutcome) => void;
}

/** A source of random bytes (tests pass a seeded one). */
export interface RandomSource {
  bytes(length: number): Uint8Array;
}

/** Mirrors the `SVC_AGENT_*` variables of the server's configuration. */
export interface AgentSettings {
  /** A heartbeat older than this makes an agent Degraded (late, not yet lost). */
  degradedAfterMs: number;
  /** A heartbeat older than this (or none at all) makes an agent Offline. */
  offlineAfterMs: number;
  /** How long an agent holds a claimed job before it is offered again or fails. */
  jobLeaseMs: number;
  /** How long a job may wait in AwaitingCSR for its agent before it fails. */
  csrTimeoutMs: number;
}

export const DEFAULT_AGENT_SETTINGS: Readonly<AgentSettings> = Object.freeze({
  degradedAfterMs: 2 * 60_000,
  offlineAfterMs: 10 * 60_000,
  jobLeaseMs: 15 * 60_000,
  csrTimeoutMs: 24 * 60 * 60_000,
});

export interface NotificationDeps {
  /** Absent → an empty registry: every event resolves as sent with "no such channel". */
  channels?: NotificationChannelRegistry;
  /**
   * Called once per event that goes dead, after the change committed (the server increments
   * the Prometheus counter `svc_notification_dead_total` here). Must not throw.
   */
  onDead?: (event: NotificationEvent) => void;
  /**
   * Immediate delivery: once the transaction that stored an event commits, its delivery is
   * enqueued on topic `notification.deliver` for the host's worker (see
   * `enqueueDeliveryAfterCommit`). Absent → events wait for the retry sweep.
   */
  queue?: Pick<Queue, 'enqueue'>;
}
