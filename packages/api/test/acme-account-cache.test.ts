import type { AcmeAccount } from '@certwright/core';
import { describe, expect, it } from 'vitest';
import { AcmeAccountCache } from '../src/protocols/acme-account-cache.js';

const account = (id: string, status: AcmeAccount['status'] = 'valid'): AcmeAccount => ({
  id,
  profile_id: 'prof-default',
  status,
  jwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' },
  jwk_thumbprint: `tp-${id}`,
  contact: [],
  terms_agreed: true,
  eab_key_id: null,
  created_ip: null,
  created_at: new Date(0),
  updated_at: new Date(0),
});

/** A cache on a hand-driven clock and revision, with a store that counts its reads. */
function setup(ttlMs = 1000) {
  let now = 0;
  let revision = 0;
  const rows = new Map<string, AcmeAccount>([['a1', account('a1')]]);
  let reads = 0;
  const read = async (id: string) => {
    reads++;
    return rows.get(id) ?? null;
  };
  const cache = new AcmeAccountCache(
    ttlMs,
    () => revision,
    () => now,
  );
  return {
    cache,
    read,
    rows,
    reads: () => reads,
    advance: (ms: number) => (now += ms),
    change: () => revision++,
  };
}

describe('ACME account cache (reads by kid)', () => {
  it('reads an account once within its time and again after it', async () => {
    const t = setup();
    expect((await t.cache.get('a1', t.read))?.id).toBe('a1');
    expect((await t.cache.get('a1', t.read))?.id).toBe('a1');
    expect(t.reads()).toBe(1);
    t.advance(1000);
    await t.cache.get('a1', t.read);
    expect(t.reads()).toBe(2);
  });

  it('reads again after an account change in this process, and sees the new state', async () => {
    const t = setup();
    await t.cache.get('a1', t.read);
    t.rows.set('a1', account('a1', 'deactivated'));
    t.change();
    expect((await t.cache.get('a1', t.read))?.status).toBe('deactivated');
    expect(t.reads()).toBe(2);
  });

  it('does not keep what it read while a change was under way', async () => {
    const t = setup();
    let release!: () => void;
    const slow = async (id: string) => {
      const row = t.rows.get(id) ?? null;
      await new Promise<void>((r) => (release = r));
      return row;
    };
    const pending = t.cache.get('a1', slow);
    t.rows.set('a1', account('a1', 'deactivated'));
    t.change();
    release();
    expect((await pending)?.status).toBe('valid');
    expect((await t.cache.get('a1', t.read))?.status).toBe('deactivated');
  });

  it('never remembers an account that does not exist, and nothing with a time of 0', async () => {
    const t = setup();
    expect(await t.cache.get('missing', t.read)).toBeNull();
    t.rows.set('missing', account('missing'));
    expect((await t.cache.get('missing', t.read))?.id).toBe('missing');
    const off = setup(0);
    await off.cache.get('a1', off.read);
    await off.cache.get('a1', off.read);
    expect(off.reads()).toBe(2);
  });
});
