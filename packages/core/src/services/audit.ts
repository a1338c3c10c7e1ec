import type { AuditCategory, AuditEvent } from '../domain/audit.js';
import type { Storage } from '../ports/storage.js';
import type { Actor, ServiceDeps } from './context.js';

export interface AuditEntry {
  action: string;
  category: AuditCategory;
  resource_type: string;
  resource_id: string;
  details?: Record<string, unknown>;
}

/** The audit trail: every state-changing operation records one entry per call. */
export class AuditService {
  constructor(private readonly deps: ServiceDeps) {}

  /**
   * Appends to the hash chain. Pass the operation's transaction so the event commits or rolls
   * back with the change it describes.
   */
  record(actor: Actor, entry: AuditEntry, tx: Storage = this.deps.storage): Promise<AuditEvent> {
    return tx.audit.append({
      actor: actor.id,
      actor_type: actor.type,
      action: entry.action,
      category: entry.category,
      resource_type: entry.resource_type,
      resource_id: entry.resource_id,
      details: entry.details ?? {},
      occurred_at: this.deps.clock.now(),
    });
  }
}
