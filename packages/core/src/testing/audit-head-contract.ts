import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewAuditEvent } from '../domain/audit.js';
import { isCertwrightError } from '../errors.js';
import type { Storage } from '../ports/storage.js';
import type { ContractOptions } from './ephemeral-contract.js';

/** A migrated storage on a database of its own, and a way to delete its audit head row. */
export interface AuditHeadLossSubject {
  storage: Storage;
  /** Deletes the head row behind the storage's back, as someone with database access could. */
  deleteHead(): Promise<void>;
  close(): Promise<void>;
}

const entry = (i: number): NewAuditEvent => ({
  actor: 'admin',
  actor_type: 'api_key',
  action: 'owner_created',
  resource_type: 'owner',
  resource_id: `o-${i}`,
  category: 'config',
  details: { i },
});

const reasonOf = async (p: Promise<unknown>): Promise<unknown> => {
  try {
    await p;
    return 'resolved';
  } catch (error) {
    return isCertwrightError(error) ? `${error.code}/${error.reason}` : error;
  }
};

/**
 * What every storage does when the audit trail's head row is gone (docs/api/audit.md):
 * verification reports a broken trail at the newest event, and every append fails closed with
 * the `audit_head_missing` reason, in a transaction or not, also on a storage that remembers
 * the head it last wrote. `factory` must return a database no other suite uses.
 */
export function describeAuditHeadLoss(
  name: string,
  factory: () => Promise<AuditHeadLossSubject>,
  options: ContractOptions = {},
): void {
  if (options.skip) {
    console.warn(`[audit head contract] skipping ${name}: ${options.skip}`);
    describe.skip(`Audit head loss: ${name}`, () => {
      it('skipped', () => {});
    });
    return;
  }
  describe(`Audit head loss: ${name}`, () => {
    let subject: AuditHeadLossSubject;
    beforeAll(async () => {
      subject = await factory();
    }, 120_000);
    afterAll(async () => {
      await subject?.close();
    });

    it('verification reports the missing head at the newest event; appends fail closed', async () => {
      const s = subject.storage;
      // Appends both ways first, so a storage that remembers its last head has one.
      await s.audit.append(entry(1));
      await s.transaction(async (tx) => {
        await tx.audit.append(entry(2));
      });
      const newest = (await s.audit.head()).seq;
      expect(await s.audit.verify()).toMatchObject({ ok: true, checked: newest });

      await subject.deleteHead();
      expect(await s.audit.verify()).toMatchObject({
        ok: false,
        checked: 0,
        brokenAt: newest,
        reason: 'the stored head is missing',
      });
      expect(await reasonOf(s.audit.head())).toBe('unavailable/audit_head_missing');
      expect(await reasonOf(s.audit.append(entry(3)))).toBe('unavailable/audit_head_missing');
      // In a transaction the change it records rolls back with the refused event.
      const owners = (await s.owners.list({ perPage: 1 })).total;
      const changed = s.transaction(async (tx) => {
        await tx.owners.create({ name: 'refused owner', email: 'refused@example.test' });
        await tx.audit.append(entry(4));
      });
      expect(await reasonOf(changed)).toBe('unavailable/audit_head_missing');
      expect((await s.owners.list({ perPage: 1 })).total).toBe(owners);
      // Nothing was written past the head that is gone.
      const stored: number[] = [];
      for await (const event of s.audit.stream()) stored.push(event.seq);
      expect(Math.max(...stored)).toBe(newest);
    });
  });
}
