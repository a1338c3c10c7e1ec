import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { NewScepProbe, Storage } from '../ports/storage.js';

/**
 * Timestamps of one test, later than anything another test writes: the suite's database is
 * shared, and `recent` reads the whole table newest first.
 */
let epoch = Date.UTC(2900, 0, 1);
const nextBase = (): number => {
  epoch += 86_400_000;
  return epoch;
};

const probe = (at: number, overrides: Partial<NewScepProbe> = {}): NewScepProbe => ({
  url: `https://scep-${randomUUID().slice(0, 8)}.example.test/scep`,
  reachable: true,
  capabilities: ['AES', 'POSTPKIOperation', 'SHA-256', 'SCEPStandard'],
  supports_rfc8894: true,
  supports_aes: true,
  supports_post: true,
  supports_renewal: false,
  supports_sha256: true,
  supports_sha512: false,
  ca_subject: 'CN=Probe CA,O=Example',
  ca_issuer: 'CN=Probe Root,O=Example',
  ca_not_before: new Date(Date.UTC(2025, 0, 1, 0, 0, 0, 123)),
  ca_not_after: new Date(Date.UTC(2035, 0, 1, 12, 30, 45, 678)),
  key_algorithm: 'RSA 2048',
  chain_length: 2,
  probed_at: new Date(at),
  duration_ms: 42,
  error: null,
  ...overrides,
});

/**
 * The SCEP probe history as the port describes it. Part of the storage contract, so it runs on
 * every engine; `storage` is read when a test runs (the suite's factory runs in beforeAll).
 */
export function describeScepProbeRepository(storage: () => Storage): void {
  describe('SCEP probes', () => {
    it('stores every field and reads it back unchanged, with a generated id', async () => {
      const s = storage();
      const given = probe(nextBase());
      const created = await s.scepProbes.create(given);
      expect(created.id).toMatch(/^scepp-/);
      const [read] = await s.scepProbes.recent(1);
      expect(read).toEqual({ ...given, id: created.id });
    });

    it('stores a failed probe: nulls, no capabilities, a long URL and a non-ASCII subject', async () => {
      const s = storage();
      const failed = probe(nextBase(), {
        url: `http://scep.example.test/${'a'.repeat(2000)}`,
        reachable: false,
        capabilities: [],
        supports_rfc8894: false,
        supports_aes: false,
        supports_post: false,
        supports_sha256: false,
        ca_subject: null,
        ca_issuer: null,
        ca_not_before: null,
        ca_not_after: null,
        key_algorithm: null,
        chain_length: 0,
        duration_ms: 0,
        error: 'the URL host resolves to a loopback address, which is never allowed as a destination',
      });
      const created = await s.scepProbes.create(failed);
      expect((await s.scepProbes.recent(1))[0]).toEqual({ ...failed, id: created.id });

      const named = probe(nextBase(), { ca_subject: 'CN=Zertifizierungsstelle Müller 证书,O=Ærø' });
      await s.scepProbes.create(named);
      expect((await s.scepProbes.recent(1))[0]?.ca_subject).toBe(named.ca_subject);
    });

    it('lists the newest first, same-millisecond results in descending id order, and honours the limit', async () => {
      const s = storage();
      const base = nextBase();
      const old = await s.scepProbes.create(probe(base));
      const tieA = await s.scepProbes.create(probe(base + 1000, { id: `scepp-tie-a-${randomUUID()}` }));
      const tieB = await s.scepProbes.create(probe(base + 1000, { id: `scepp-tie-b-${randomUUID()}` }));
      const newest = await s.scepProbes.create(probe(base + 2000));

      expect((await s.scepProbes.recent(4)).map((p) => p.id)).toEqual([newest.id, tieB.id, tieA.id, old.id]);
      expect((await s.scepProbes.recent(2)).map((p) => p.id)).toEqual([newest.id, tieB.id]);
    });

    it('clamps the limit to 1–200', async () => {
      const s = storage();
      const base = nextBase();
      await s.transaction(async (tx) => {
        for (let i = 0; i < 201; i++) await tx.scepProbes.create(probe(base + i));
      });
      expect(await s.scepProbes.recent(0)).toHaveLength(1);
      expect(await s.scepProbes.recent(-3)).toHaveLength(1);
      const most = await s.scepProbes.recent(1000);
      expect(most).toHaveLength(200);
      expect(most[0]?.probed_at.getTime()).toBe(base + 200);
      expect(most[199]?.probed_at.getTime()).toBe(base + 1);
    });

    it('keeps nothing of a probe written in a transaction that rolls back', async () => {
      const s = storage();
      const before = (await s.scepProbes.recent(1))[0]?.id;
      const failure = new Error('rolled back on purpose');
      await expect(
        s.transaction(async (tx) => {
          await tx.scepProbes.create(probe(nextBase()));
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect((await s.scepProbes.recent(1))[0]?.id).toBe(before);
    });
  });
}
