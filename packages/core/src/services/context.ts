import type { ActorType } from '../domain/audit.js';
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import type { Storage } from '../ports/storage.js';

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
}
