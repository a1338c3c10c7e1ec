import type { CertificateProfile } from '@certwright/core';
import { describe, expect, it } from 'vitest';
import { ProfileLookupCache } from './profile-lookup-cache.js';

const profile = (name: string) => ({ id: 'prof-x', name }) as CertificateProfile;

function setup(ttlMs: number) {
  let now = 0;
  let revision = 0;
  let reads = 0;
  let current: CertificateProfile | null = profile('first');
  const cache = new ProfileLookupCache(
    ttlMs,
    () => revision,
    () => now,
  );
  const get = () =>
    cache.get('default', async () => {
      reads++;
      return current;
    });
  return {
    get,
    reads: () => reads,
    advance: (ms: number) => {
      now += ms;
    },
    change: (next: CertificateProfile | null) => {
      current = next;
      revision++;
    },
    changeElsewhere: (next: CertificateProfile | null) => {
      current = next;
    },
  };
}

describe('ProfileLookupCache', () => {
  it('reads once within the time to live, and again after it', async () => {
    const c = setup(1000);
    expect((await c.get())?.name).toBe('first');
    await c.get();
    expect(c.reads()).toBe(1);
    c.changeElsewhere(profile('second'));
    c.advance(999);
    expect((await c.get())?.name).toBe('first');
    c.advance(1);
    expect((await c.get())?.name).toBe('second');
    expect(c.reads()).toBe(2);
  });

  it('reads again at once after a change through this process, a removal included', async () => {
    const c = setup(60_000);
    await c.get();
    c.change(profile('changed'));
    expect((await c.get())?.name).toBe('changed');
    c.change(null);
    expect(await c.get()).toBeNull();
    expect(c.reads()).toBe(3);
  });

  it('keeps nothing with a time to live of 0', async () => {
    const c = setup(0);
    await c.get();
    await c.get();
    expect(c.reads()).toBe(2);
  });
});
