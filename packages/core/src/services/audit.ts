import {
  AUDIT_CATEGORIES,
  type AuditCategory,
  type AuditEvent,
  auditCategorySchema,
  verifyAuditChain,
} from '../domain/audit.js';
import { type FieldIssue, validationError } from '../errors.js';
import type { Storage } from '../ports/storage.js';
import type { Actor, ServiceDeps } from './context.js';

export interface AuditEntry {
  action: string;
  category: AuditCategory;
  resource_type: string;
  resource_id: string;
  details?: Record<string, unknown>;
}

/** Spec §4.16 / §8: an export covers at most 90 days and 1–100,000 events. */
export const AUDIT_EXPORT_MAX_RANGE_MS = 90 * 24 * 60 * 60_000;
export const AUDIT_EXPORT_MAX_LIMIT = 100_000;

/**
 * Export parameters as a caller gives them. Defaults: `to` absent → no upper bound (up to the
 * newest event); `from` absent → 90 days before `to` (or before now); `limit` absent → 100,000;
 * `category` absent → every category. `from` is inclusive, `to` exclusive.
 */
export interface AuditExportQuery {
  from?: Date;
  to?: Date;
  limit?: number;
  category?: AuditCategory;
}

export interface AuditChainReport {
  ok: boolean;
  /** Events checked before the answer was known (all of them when ok). */
  checked: number;
  /** seq of the first event whose link or hash does not match. */
  broken_at?: number;
  reason?: string;
  /** seq of the newest event, null for an empty trail. */
  head_seq: number | null;
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

  /**
   * Checks the parameters and returns the events in chain order as a lazy stream: the storage
   * fetches one page per round trip, so exporting 100,000 events never holds them all.
   * Invalid parameters throw `validation_failed` naming the field, before anything is read.
   */
  export(query: AuditExportQuery = {}): AsyncIterable<AuditEvent> {
    const checked = this.checkExportQuery(query);
    return this.deps.storage.audit.stream({
      from: checked.from,
      ...(checked.to ? { to: checked.to } : {}),
      ...(checked.category ? { category: checked.category } : {}),
      limit: checked.limit,
      pageSize: 1000,
    });
  }

  /** The export window after defaults, or `validation_failed` naming every bad field. */
  checkExportQuery(query: AuditExportQuery): {
    from: Date;
    to: Date | undefined;
    limit: number;
    category: AuditCategory | undefined;
  } {
    const issues: FieldIssue[] = [];
    const invalidDate = (d: Date | undefined) => d !== undefined && Number.isNaN(d.getTime());
    if (invalidDate(query.from)) issues.push({ field: 'from', message: 'must be an RFC 3339 timestamp' });
    if (invalidDate(query.to)) issues.push({ field: 'to', message: 'must be an RFC 3339 timestamp' });
    const limit = query.limit ?? AUDIT_EXPORT_MAX_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > AUDIT_EXPORT_MAX_LIMIT) {
      issues.push({ field: 'limit', message: `must be an integer from 1 to ${AUDIT_EXPORT_MAX_LIMIT}` });
    }
    if (query.category !== undefined && !auditCategorySchema.safeParse(query.category).success) {
      issues.push({ field: 'category', message: `must be one of ${AUDIT_CATEGORIES.join(', ')}` });
    }
    if (issues.length > 0) throw validationError(issues);

    const end = query.to ?? this.deps.clock.now();
    const from = query.from ?? new Date(end.getTime() - AUDIT_EXPORT_MAX_RANGE_MS);
    if (from.getTime() > end.getTime()) {
      issues.push({ field: 'from', message: 'must not be after to' });
    } else if (end.getTime() - from.getTime() > AUDIT_EXPORT_MAX_RANGE_MS) {
      issues.push({ field: query.from ? 'from' : 'to', message: 'the range may span at most 90 days' });
    }
    if (issues.length > 0) throw validationError(issues);
    return { from, to: query.to, limit, category: query.category };
  }

  /**
   * Walks the whole chain from the first event and recomputes every hash. A changed, removed or
   * reordered event is reported by the seq where the chain stops matching.
   */
  async verifyChain(): Promise<AuditChainReport> {
    const head = await this.deps.storage.audit.head();
    const result = await verifyAuditChain(this.deps.storage.audit.stream({ pageSize: 1000 }));
    const head_seq = head?.seq ?? null;
    if (result.ok) {
      // An empty walk over a non-empty trail means the first rows were removed.
      if (head && result.checked === 0) {
        return { ok: false, checked: 0, broken_at: 1, reason: 'events missing', head_seq };
      }
      return { ok: true, checked: result.checked, head_seq };
    }
    return {
      ok: false,
      checked: result.checked,
      broken_at: result.brokenAt,
      reason: result.reason,
      head_seq,
    };
  }
}
