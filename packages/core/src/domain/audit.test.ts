import { describe, expect, it } from 'vitest';
import {
  AUDIT_GENESIS_HASH,
  type AuditEvent,
  canonicalJson,
  computeAuditHash,
  verifyAuditChain,
} from './audit.js';

async function chain(n: number): Promise<AuditEvent[]> {
  const out: AuditEvent[] = [];
  let prev = AUDIT_GENESIS_HASH;
  for (let i = 1; i <= n; i += 1) {
    const base = {
      id: `ae-${i}`,
      seq: i,
      actor: 'admin',
      actor_type: 'api_key' as const,
      action: 'certificate_created',
      resource_type: 'certificate',
      resource_id: `mc-${i}`,
      category: 'cert_lifecycle' as const,
      details: { b: 1, a: [i] },
      occurred_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
      prev_hash: prev,
    };
    const hash = await computeAuditHash(base);
    out.push({ ...base, hash });
    prev = hash;
  }
  return out;
}

describe('audit hash chain', () => {
  it('canonical JSON ignores key order', () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: 3 } })).toBe(canonicalJson({ a: { c: 3, d: 2 }, b: 1 }));
  });

  it('verifies an intact chain', async () => {
    expect(await verifyAuditChain(await chain(5))).toEqual({ ok: true, checked: 5 });
  });

  it('finds a tampered field, a removed event and a relinked event', async () => {
    const events = await chain(5);
    const tampered = events.map((e) => (e.seq === 3 ? { ...e, actor: 'mallory' } : e));
    expect(await verifyAuditChain(tampered)).toMatchObject({
      ok: false,
      brokenAt: 3,
      reason: 'hash mismatch',
    });
    const removed = events.filter((e) => e.seq !== 2);
    expect(await verifyAuditChain(removed)).toMatchObject({ ok: false, brokenAt: 3 });
  });
});
