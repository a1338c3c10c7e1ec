import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { SecretBox } from '../crypto/secret-box.js';
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
 * The hash of an event written before the chain was keyed: SHA-256 over the previous hash and
 * the canonical JSON of every other field. Anyone can recompute it, so it only detects accidents;
 * such events stay verifiable and are pinned by the first keyed event, which links to them.
 */
export async function legacyAuditHash(event: Omit<AuditEvent, 'hash'>): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest(
    'SHA-256',
    new TextEncoder().encode(`${event.prev_hash}\n${eventBody(event)}`),
  );
  return toHex(new Uint8Array(digest));
}

function eventBody(event: Omit<AuditEvent, 'hash'>): string {
  return canonicalJson({ ...event, occurred_at: event.occurred_at.toISOString() });
}

function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

function fromHex(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^(?:[0-9a-f]{2})+$/.test(text)) return null;
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i += 1) out[i] = Number.parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** HKDF `info` label of the chain key; another label would give another key (RFC 5869 §3.2). */
export const AUDIT_CHAIN_KEY_INFO = 'certwright audit chain v1';

const chainKeys = new WeakMap<SecretBox, AuditChainKey>();

/**
 * The key of the audit chain: HMAC-SHA-256 under a subkey derived with HKDF from the key of the
 * storage's SecretBox, which lives outside the database. Without it, nobody can write an event
 * or a head that verifies. The key is derived non-extractable, held only in a private field,
 * and this object serializes to a placeholder, so it cannot end up in a log or a response.
 */
export class AuditChainKey {
  /**
   * The derived key as node:crypto holds it: an HMAC over a short message is a synchronous
   * call there, where WebCrypto queues a job on the thread pool for each event and head.
   */
  readonly #key: Promise<KeyObject>;

  private constructor(key: Promise<KeyObject>) {
    this.#key = key;
    // A derivation failure surfaces at the first mac/verify, not as an unhandled rejection.
    this.#key.catch(() => {});
  }

  /**
   * The chain key from its 32 bytes as stored (sealed) in the database, so that it outlives the
   * encryption key it was first derived from: a key rotation re-seals it and the trail keeps
   * verifying (docs/operations/key-rotation.md). The bytes are copied into the KeyObject.
   */
  static fromBytes(bytes: Uint8Array): AuditChainKey {
    return new AuditChainKey(Promise.resolve(createSecretKey(Buffer.from(bytes))));
  }

  /** The chain key derived from the current key of `box` (derived once per box). */
  /**
   * The chain key's bytes derived from the ring key `keyId` of `box`, for a storage that keeps
   * the chain key sealed so that the trail verifies across a key rotation. The caller zeroes them.
   */
  static deriveBytes(box: SecretBox, keyId?: string): Promise<Uint8Array> {
    return box.deriveBytes(AUDIT_CHAIN_KEY_INFO, keyId);
  }

  static of(box: SecretBox): AuditChainKey {
    let key = chainKeys.get(box);
    if (!key) {
      key = new AuditChainKey(box.deriveHmacKey(AUDIT_CHAIN_KEY_INFO));
      chainKeys.set(box, key);
    }
    return key;
  }

  async mac(message: string): Promise<string> {
    return createHmac('sha256', await this.#key)
      .update(message, 'utf8')
      .digest('hex');
  }

  /** Constant-time check of a stored MAC (hex). */
  async verify(message: string, mac: string): Promise<boolean> {
    const tag = fromHex(mac);
    if (!tag) return false;
    const expected = createHmac('sha256', await this.#key)
      .update(message, 'utf8')
      .digest();
    return tag.length === expected.length && timingSafeEqual(tag, expected);
  }

  toJSON(): string {
    return '[AuditChainKey]';
  }
}

/**
 * What an event's hash authenticates: every field but the hash (prev_hash and seq included, so
 * an event cannot be moved or relinked), after a label that keeps event and head MACs apart.
 */
export function auditEventMessage(event: Omit<AuditEvent, 'hash'>): string {
  return `certwright-audit-event\n${eventBody(event)}`;
}

/** The hash of a keyed event: HMAC-SHA-256 of `auditEventMessage` under the chain key. */
export function computeAuditHash(event: Omit<AuditEvent, 'hash'>, key: AuditChainKey): Promise<string> {
  return key.mac(auditEventMessage(event));
}

/**
 * The stored head of the chain, updated in the transaction of every append. Verification
 * requires the newest event to be the head and the number of events to be its seq, so removing
 * the newest events is detected unless the head is rewound too (see docs/api/audit.md).
 */
export interface AuditHead {
  /** seq of the newest event, which is also the number of events; 0 for an empty trail. */
  seq: number;
  /** hash of the newest event; {@link AUDIT_GENESIS_HASH} for an empty trail. */
  hash: string;
  /**
   * The first seq whose hash is keyed. Events below it were written before the chain was keyed
   * and carry {@link legacyAuditHash}; 1 for a trail that was keyed from the start.
   */
  keyed_from_seq: number;
  /** HMAC over the three fields above, so none of them can be moved without the key. */
  mac: string | null;
}

/** What an operator recorded elsewhere: the hash the event at `seq` had then. */
export interface AuditAnchor {
  seq: number;
  hash: string;
}

export function auditHeadMessage(head: Omit<AuditHead, 'mac'>): string {
  return `certwright-audit-head\n${canonicalJson({
    seq: head.seq,
    hash: head.hash,
    keyed_from_seq: head.keyed_from_seq,
  })}`;
}

export function computeAuditHeadMac(head: Omit<AuditHead, 'mac'>, key: AuditChainKey): Promise<string> {
  return key.mac(auditHeadMessage(head));
}

export type AuditVerification =
  | { ok: true; checked: number }
  | { ok: false; checked: number; brokenAt: number; reason: string };

/**
 * Checks a whole trail, given in seq order from the first event, against the stored head:
 * every seq from 1 without a gap, every link, every hash (legacy below `keyed_from_seq`, HMAC
 * from there), the newest event equal to the head and their count equal to its seq, the head's
 * own MAC, and, when given, an anchor taken earlier. `brokenAt` is the first position that does
 * not hold: the first altered or missing event, or the head's seq when only the head is wrong.
 */
export async function verifyAuditChain(
  events: AsyncIterable<AuditEvent> | Iterable<AuditEvent>,
  key: AuditChainKey,
  head: AuditHead,
  anchor?: AuditAnchor,
): Promise<AuditVerification> {
  let prev = AUDIT_GENESIS_HASH;
  let checked = 0;
  const broken = (brokenAt: number, reason: string): AuditVerification => ({
    ok: false,
    checked,
    brokenAt,
    reason,
  });
  for await (const event of events) {
    const expected = checked + 1;
    if (event.seq !== expected) {
      return event.seq > expected
        ? broken(expected, `event ${expected} is missing`)
        : broken(event.seq, `event ${event.seq} is out of order`);
    }
    if (event.seq > head.seq) return broken(event.seq, 'event after the stored head');
    if (event.prev_hash !== prev) return broken(event.seq, 'prev_hash does not link');
    const { hash, ...rest } = event;
    const valid =
      event.seq < head.keyed_from_seq
        ? (await legacyAuditHash(rest)) === hash
        : await key.verify(auditEventMessage(rest), hash);
    if (!valid) return broken(event.seq, 'hash mismatch');
    if (anchor && anchor.seq === event.seq && anchor.hash !== hash) {
      return broken(event.seq, 'differs from the anchor');
    }
    prev = hash;
    checked += 1;
  }
  if (checked < head.seq) return broken(checked + 1, `event ${checked + 1} is missing`);
  if (prev !== head.hash) return broken(head.seq, 'the newest event is not the stored head');
  if (!head.mac || !(await key.verify(auditHeadMessage(head), head.mac))) {
    return broken(head.seq, 'the stored head does not verify');
  }
  if (anchor && anchor.seq > head.seq) return broken(head.seq + 1, `event ${head.seq + 1} is missing`);
  return { ok: true, checked };
}
