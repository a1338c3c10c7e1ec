import { describe, expect, it } from 'vitest';
import { RevisionedCache } from './revisioned-cache.js';

interface Row {
  id: string;
  state: string;
}

/**
 * A cache on a hand-driven clock and revision over a store that counts its reads: `change`
 * writes through this process (the revision grows), `changeElsewhere` as another instance would.
 */
function setup(ttlMs = 1000, keep?: (value: Row | null) => boolean) {
  let now = 0;
  let revision = 0;
  let reads = 0;
  const rows = new Map<string, Row>([['a1', { id: 'a1', state: 'first' }]]);
  const cache = new RevisionedCache<Row | null>({
    ttlMs,
    revision: () => revision,
    now: () => now,
    ...(keep ? { keep } : {}),
  });
  const read = (id: string) => async () => {
    reads++;
    return rows.get(id) ?? null;
  };
  return {
    cache,
    get: (id = 'a1') => cache.get(id, read(id)),
    rows,
    reads: () => reads,
    advance: (ms: number) => (now += ms),
    change: (id: string, row: Row | null) => {
      if (row) rows.set(id, row);
      else rows.delete(id);
      revision++;
    },
    changeElsewhere: (id: string, row: Row) => rows.set(id, row),
  };
}

describe('RevisionedCache', () => {
  it('reads once within the time to live, and again after it', async () => {
    const c = setup(1000);
    expect((await c.get())?.state).toBe('first');
    await c.get();
    expect(c.reads()).toBe(1);
    c.changeElsewhere('a1', { id: 'a1', state: 'second' });
    c.advance(999);
    expect((await c.get())?.state).toBe('first');
    c.advance(1);
    expect((await c.get())?.state).toBe('second');
    expect(c.reads()).toBe(2);
  });

  it('reads again at once after a change through this process, a removal included', async () => {
    const c = setup(60_000);
    await c.get();
    c.change('a1', { id: 'a1', state: 'changed' });
    expect((await c.get())?.state).toBe('changed');
    c.change('a1', null);
    expect(await c.get()).toBeNull();
    expect(c.reads()).toBe(3);
  });

  it('does not keep what it read while a change was under way', async () => {
    const c = setup();
    let release!: () => void;
    const pending = c.cache.get('a1', async () => {
      const row = c.rows.get('a1') ?? null;
      await new Promise<void>((r) => (release = r));
      return row;
    });
    c.change('a1', { id: 'a1', state: 'deactivated' });
    release();
    expect((await pending)?.state).toBe('first');
    expect((await c.get())?.state).toBe('deactivated');
  });

  it('keeps nothing with a time to live of 0', async () => {
    const c = setup(0);
    await c.get();
    await c.get();
    expect(c.reads()).toBe(2);
  });

  it('never remembers a value `keep` refuses (an account that does not exist)', async () => {
    const c = setup(1000, (row) => row !== null);
    expect(await c.get('missing')).toBeNull();
    c.changeElsewhere('missing', { id: 'missing', state: 'new' });
    expect((await c.get('missing'))?.id).toBe('missing');
    await c.get('missing');
    expect(c.reads()).toBe(2);
  });

  it('does not remember a read that failed', async () => {
    const c = setup();
    await expect(c.cache.get('a1', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect((await c.get())?.state).toBe('first');
    expect(c.reads()).toBe(1);
  });

  it('drops the oldest entry beyond its size limit', async () => {
    let reads = 0;
    const cache = new RevisionedCache<number>({ ttlMs: 1000, revision: () => 0, now: () => 0, max: 2 });
    const read = async () => ++reads;
    await cache.get('a', read);
    await cache.get('b', read);
    await cache.get('c', read);
    expect(await cache.get('b', read)).toBe(2);
    expect(await cache.get('a', read)).toBe(4);
  });
});
