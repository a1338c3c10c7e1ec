import {
  AUDIT_CATEGORIES,
  type AuditAnchor,
  type AuditCategory,
  type AuditEvent,
  auditCategorySchema,
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

/** An export covers at most 90 days and 1–100,000 events. */
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
  /** The first position that does not hold: an altered or missing event, or the head's seq. */
  broken_at?: number;
  reason?: string;
  /** seq of the newest event by the stored head, null for an empty trail. */
  head_seq: number | null;
  /** hash (HMAC) of that event: with head_seq, what an operator anchors elsewhere. */
  head_hash: string | null;
}

/** The stored head as an operator anchors it (docs/api/audit.md). */
export interface AuditHeadReport {
  /** seq of the newest event, which is also the number of events; 0 for an empty trail. */
  seq: number;
  /** hash of the newest event: its HMAC under the chain key (the genesis value when empty). */
  hash: string;
  /** Events below this seq predate the keyed chain and carry unkeyed SHA-256 hashes. */
  keyed_from_seq: number;
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
   * Walks the whole chain from the first event, checks every link and MAC under the chain key,
   * and checks that the newest event and the number of events match the stored head. With an
   * anchor, also that the event at `anchor.seq` still exists with `anchor.hash`: the one check
   * that also catches a trail cut back together with its head.
   */
  async verifyChain(anchor?: AuditAnchor): Promise<AuditChainReport> {
    const result = await this.deps.storage.audit.verify(anchor);
    const head = {
      head_seq: result.head.seq > 0 ? result.head.seq : null,
      head_hash: result.head.seq > 0 ? result.head.hash : null,
    };
    if (result.ok) return { ok: true, checked: result.checked, ...head };
    return { ok: false, checked: result.checked, broken_at: result.brokenAt, reason: result.reason, ...head };
  }

  /** The stored head, without walking the chain. */
  async head(): Promise<AuditHeadReport> {
    const { seq, hash, keyed_from_seq } = await this.deps.storage.audit.head();
    return { seq, hash, keyed_from_seq };
  }
}

/** One `config` category audit entry for a change to reference data. */
export function configEvent(action: string, resourceType: string, resourceId: string, details?: object) {
  return {
    action,
    category: 'config' as const,
    resource_type: resourceType,
    resource_id: resourceId,
    details: details ? { ...details } : {},
  };
}
