import { createHmac, hkdfSync } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { SecretBox } from '../crypto/secret-box.js';
import {
  AUDIT_CHAIN_KEY_INFO,
  AUDIT_GENESIS_HASH,
  AuditChainKey,
  type AuditEvent,
  type AuditHead,
  auditEventMessage,
  canonicalJson,
  computeAuditHash,
  computeAuditHeadMac,
  legacyAuditHash,
  verifyAuditChain,
} from './audit.js';

const rawKey = SecretBox.generateKey();
const key = AuditChainKey.of(new SecretBox(rawKey));
const otherKey = AuditChainKey.of(new SecretBox(SecretBox.generateKey()));

type Unhashed = Omit<AuditEvent, 'hash'>;

function unhashed(seq: number, prev: string): Unhashed {
  return {
    id: `ae-${seq}`,
    seq,
    actor: 'admin',
    actor_type: 'api_key',
    action: 'certificate_created',
    resource_type: 'certificate',
    resource_id: `mc-${seq}`,
    category: 'cert_lifecycle',
    details: { b: 1, a: [seq] },
    occurred_at: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)),
    prev_hash: prev,
  };
}

async function sealed(
  seq: number,
  hash: string,
  keyedFrom: number,
  with_: AuditChainKey = key,
): Promise<AuditHead> {
  const head = { seq, hash, keyed_from_seq: keyedFrom };
  return { ...head, mac: await computeAuditHeadMac(head, with_) };
}

/**
 * A trail of `n` events as the store writes it: events below `keyedFrom` carry legacy unkeyed
 * hashes (written before the chain was keyed), the rest HMACs under `with_`.
 */
async function trail(
  n: number,
  { keyedFrom = 1, with_ = key }: { keyedFrom?: number; with_?: AuditChainKey } = {},
): Promise<{ events: AuditEvent[]; head: AuditHead }> {
  const events: AuditEvent[] = [];
  let prev = AUDIT_GENESIS_HASH;
  for (let seq = 1; seq <= n; seq += 1) {
    const base = unhashed(seq, prev);
    const hash = seq < keyedFrom ? await legacyAuditHash(base) : await computeAuditHash(base, with_);
    events.push({ ...base, hash });
    prev = hash;
  }
  return { events, head: await sealed(n, prev, keyedFrom, with_) };
}

/** What someone with database write access but no key can do: recompute unkeyed hashes. */
async function rehashUnkeyed(events: AuditEvent[], from: number): Promise<AuditEvent[]> {
  const out: AuditEvent[] = [];
  let prev = from > 1 ? (events[from - 2] as AuditEvent).hash : AUDIT_GENESIS_HASH;
  for (const event of events) {
    if (event.seq < from) {
      out.push(event);
      continue;
    }
    const { hash: _, ...rest } = event;
    const base = { ...rest, prev_hash: prev };
    const hash = await legacyAuditHash(base);
    out.push({ ...base, hash });
    prev = hash;
  }
  return out;
}

describe('audit hash chain', () => {
  it('canonical JSON ignores key order', () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: 3 } })).toBe(canonicalJson({ a: { c: 3, d: 2 }, b: 1 }));
  });

  it('verifies an intact keyed chain and an empty one', async () => {
    const { events, head } = await trail(5);
    expect(await verifyAuditChain(events, key, head)).toEqual({ ok: true, checked: 5 });
    expect(await verifyAuditChain([], key, await sealed(0, AUDIT_GENESIS_HASH, 1))).toEqual({
      ok: true,
      checked: 0,
    });
  });

  it('finds a tampered field, a removed event and a relinked event', async () => {
    const { events, head } = await trail(5);
    const tampered = events.map((e) => (e.seq === 3 ? { ...e, actor: 'mallory' } : e));
    expect(await verifyAuditChain(tampered, key, head)).toEqual({
      ok: false,
      checked: 2,
      brokenAt: 3,
      reason: 'hash mismatch',
    });

    const removed = events.filter((e) => e.seq !== 2);
    expect(await verifyAuditChain(removed, key, head)).toEqual({
      ok: false,
      checked: 1,
      brokenAt: 2,
      reason: 'event 2 is missing',
    });

    // Event 3 is dropped and event 4 is relinked in its place: renumbered to seq 3 and linked
    // to event 2's hash, so seq and links are seamless; only the event's own hash can tell.
    const [e1, e2, , e4, e5] = events as [AuditEvent, AuditEvent, AuditEvent, AuditEvent, AuditEvent];
    const relinked = { ...e4, seq: 3, prev_hash: e2.hash };
    const rest = { ...e5, seq: 4, prev_hash: relinked.hash };
    const cut = [e1, e2, relinked, rest];
    expect(relinked.prev_hash).toBe(cut[1]?.hash);
    expect(await verifyAuditChain(cut, key, await sealed(4, rest.hash, 1))).toEqual({
      ok: false,
      checked: 2,
      brokenAt: 3,
      reason: 'hash mismatch',
    });
  });

  it('detects an edited event whose later hashes were all recomputed without the key', async () => {
    const { events, head } = await trail(6);
    const edited = events.map((e) => (e.seq === 3 ? { ...e, details: { b: 2, a: [3] } } : e));
    const rewritten = await rehashUnkeyed(edited, 3);
    // Every link is consistent again, the head row updated to match: still caught at seq 3.
    const forgedHead = { ...head, hash: (rewritten[5] as AuditEvent).hash };
    expect(await verifyAuditChain(rewritten, key, forgedHead)).toEqual({
      ok: false,
      checked: 2,
      brokenAt: 3,
      reason: 'hash mismatch',
    });
  });

  it('detects the newest events deleted, with or without the head row rewound', async () => {
    const { events, head } = await trail(6);
    for (const n of [1, 3, 6]) {
      expect(await verifyAuditChain(events.slice(0, 6 - n), key, head)).toEqual({
        ok: false,
        checked: 6 - n,
        brokenAt: 7 - n,
        reason: `event ${7 - n} is missing`,
      });
    }
    // The head row set back to event 4 by hand: its MAC no longer matches.
    const rewound = { ...head, seq: 4, hash: (events[3] as AuditEvent).hash };
    expect(await verifyAuditChain(events.slice(0, 4), key, rewound)).toEqual({
      ok: false,
      checked: 4,
      brokenAt: 4,
      reason: 'the stored head does not verify',
    });
  });

  it('catches a head replayed from earlier only against an anchor', async () => {
    const { events, head } = await trail(6);
    // A copy of the head row as it was at seq 4, restored with the events after it deleted:
    // consistent under the key, so only a head recorded elsewhere tells.
    const older = await sealed(4, (events[3] as AuditEvent).hash, 1);
    const cut = events.slice(0, 4);
    expect(await verifyAuditChain(cut, key, older)).toEqual({ ok: true, checked: 4 });
    const anchor = { seq: head.seq, hash: head.hash };
    expect(await verifyAuditChain(cut, key, older, anchor)).toEqual({
      ok: false,
      checked: 4,
      brokenAt: 5,
      reason: 'event 5 is missing',
    });
    expect(await verifyAuditChain(events, key, head, anchor)).toEqual({ ok: true, checked: 6 });
    const wrong = { seq: 2, hash: (events[2] as AuditEvent).hash };
    expect(await verifyAuditChain(events, key, head, wrong)).toMatchObject({
      ok: false,
      brokenAt: 2,
      reason: 'differs from the anchor',
    });
  });

  it('does not verify a chain built with another key', async () => {
    const { events, head } = await trail(3, { with_: otherKey });
    expect(await verifyAuditChain(events, otherKey, head)).toEqual({ ok: true, checked: 3 });
    expect(await verifyAuditChain(events, key, head)).toEqual({
      ok: false,
      checked: 0,
      brokenAt: 1,
      reason: 'hash mismatch',
    });
    // An event relinked and re-MACed under a key other than the chain's is caught too.
    const mine = await trail(3);
    const [a, b] = mine.events as [AuditEvent, AuditEvent];
    const { hash: _, ...third } = { ...(mine.events[2] as AuditEvent), resource_id: 'mc-forged' };
    const forged = { ...third, hash: await computeAuditHash(third, otherKey) };
    expect(await verifyAuditChain([a, b, forged], key, mine.head)).toMatchObject({
      ok: false,
      brokenAt: 3,
      reason: 'hash mismatch',
    });
  });

  it('verifies a chain keyed from a recorded position and pins the unkeyed events before it', async () => {
    const { events, head } = await trail(6, { keyedFrom: 4 });
    expect(await verifyAuditChain(events, key, head)).toEqual({ ok: true, checked: 6 });
    // An unkeyed event rewritten with its unkeyed successors recomputed: the first keyed event
    // links to the old last unkeyed hash and cannot be re-MACed without the key.
    const edited = events.map((e) => (e.seq === 2 ? { ...e, actor: 'mallory' } : e));
    const rewritten = [...(await rehashUnkeyed(edited.slice(0, 3), 2)), ...events.slice(3)];
    expect(await verifyAuditChain(rewritten, key, head)).toEqual({
      ok: false,
      checked: 3,
      brokenAt: 4,
      reason: 'prev_hash does not link',
    });
  });

  it('refuses a head whose keyed position was moved to pass a rewritten trail off as unkeyed', async () => {
    const { events, head } = await trail(5);
    const rewritten = await rehashUnkeyed(
      events.map((e) => (e.seq === 2 ? { ...e, actor: 'mallory' } : e)),
      1,
    );
    const downgraded = { ...head, hash: (rewritten[4] as AuditEvent).hash, keyed_from_seq: 6 };
    expect(await verifyAuditChain(rewritten, key, downgraded)).toEqual({
      ok: false,
      checked: 5,
      brokenAt: 5,
      reason: 'the stored head does not verify',
    });
    expect(await verifyAuditChain(events, key, { ...head, mac: null })).toMatchObject({
      ok: false,
      reason: 'the stored head does not verify',
    });
  });

  it('derives the chain key with HKDF: not the encryption key, never serialized', async () => {
    const message = auditEventMessage(unhashed(1, AUDIT_GENESIS_HASH));
    const raw = await globalThis.crypto.subtle.importKey(
      'raw',
      new Uint8Array(rawKey),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    );
    const direct = Buffer.from(
      await globalThis.crypto.subtle.sign('HMAC', raw, new TextEncoder().encode(message)),
    ).toString('hex');
    expect(await key.mac(message)).not.toBe(direct);
    // Same box key, same chain key: another process with the same SVC_ENCRYPTION_KEY agrees.
    expect(await AuditChainKey.of(new SecretBox(rawKey)).mac(message)).toBe(await key.mac(message));
    const hex = Buffer.from(rawKey).toString('hex');
    expect(JSON.stringify({ key })).toBe('{"key":"[AuditChainKey]"}');
    expect(inspect(key, { showHidden: true, depth: 5 })).not.toContain(hex);
  });

  it('keeps the chain key of earlier releases, so trails written before an upgrade still verify', async () => {
    // RFC 5869 HKDF-SHA-256 with an empty salt and the published label, computed independently.
    const subkey = hkdfSync('sha256', Buffer.from(rawKey), Buffer.alloc(0), AUDIT_CHAIN_KEY_INFO, 32);
    const message = auditEventMessage(unhashed(1, AUDIT_GENESIS_HASH));
    const expected = createHmac('sha256', Buffer.from(subkey)).update(message, 'utf8').digest('hex');
    expect(await AuditChainKey.of(new SecretBox(rawKey)).mac(message)).toBe(expected);
  });
});
