import { z } from 'zod';
import { idSchema, timestampSchema } from './common.js';

export const AUDIT_CATEGORIES = ['cert_lifecycle', 'auth', 'config'] as const;
export const auditCategorySchema = z.enum(AUDIT_CATEGORIES);
export type AuditCategory = z.infer<typeof auditCategorySchema>;

export const ACTOR_TYPES = ['user', 'api_key', 'agent', 'system', 'anonymous'] as const;
export const actorTypeSchema = z.enum(ACTOR_TYPES);
export type ActorType = z.infer<typeof actorTypeSchema>;

/** prev_hash of the first event of a chain. */
export const AUDIT_GENESIS_HASH = '0'.repeat(64);

export const auditEventSchema = z.object({
  id: idSchema,
  /** Position in the chain, 1 for the first event; strictly increasing without gaps. */
  seq: z.number().int().min(1),
  actor: z.string().max(255),
  actor_type: actorTypeSchema,
  action: z.string().min(1).max(128),
  resource_type: z.string().max(64),
  resource_id: z.string().max(255),
  category: auditCategorySchema,
  details: z.record(z.string(), z.unknown()),
  occurred_at: timestampSchema,
  prev_hash: z.string().regex(/^[0-9a-f]{64}$/),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
});
export type AuditEvent = z.infer<typeof auditEventSchema>;

/** What a caller supplies; id, seq and the hashes are assigned by the store when appending. */
export type NewAuditEvent = Omit<AuditEvent, 'id' | 'seq' | 'prev_hash' | 'hash' | 'occurred_at'> & {
  occurred_at?: Date;
};

/** JSON with object keys sorted at every level, so the same event always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/**
 * The chain hash: SHA-256 over the previous hash and the canonical JSON of every other field.
 * Changing, removing or reordering any stored event breaks every later hash.
 */
export async function computeAuditHash(event: Omit<AuditEvent, 'hash'>): Promise<string> {
  const body = canonicalJson({ ...event, occurred_at: event.occurred_at.toISOString() });
  const digest = await globalThis.crypto.subtle.digest(
    'SHA-256',
    new TextEncoder().encode(`${event.prev_hash}\n${body}`),
  );
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Checks events given in chain order. Returns the seq of the first event whose hash or link
 * does not match, or null when the chain is intact. `previousHash` is the hash before the
 * first event given (the genesis hash when starting at seq 1).
 */
export async function verifyAuditChain(
  events: AsyncIterable<AuditEvent> | Iterable<AuditEvent>,
  previousHash: string = AUDIT_GENESIS_HASH,
): Promise<{ ok: true; checked: number } | { ok: false; checked: number; brokenAt: number; reason: string }> {
  let prev = previousHash;
  let prevSeq: number | null = null;
  let checked = 0;
  for await (const event of events) {
    if (prevSeq !== null && event.seq !== prevSeq + 1) {
      return { ok: false, checked, brokenAt: event.seq, reason: `gap after seq ${prevSeq}` };
    }
    if (event.prev_hash !== prev)
      return { ok: false, checked, brokenAt: event.seq, reason: 'prev_hash does not link' };
    const { hash, ...rest } = event;
    if ((await computeAuditHash(rest)) !== hash)
      return { ok: false, checked, brokenAt: event.seq, reason: 'hash mismatch' };
    prev = hash;
    prevSeq = event.seq;
    checked += 1;
  }
  return { ok: true, checked };
}
