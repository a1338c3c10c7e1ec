import { ManualClock, type Storage } from '@certwright/core';
import { createCertificationRequest, generateKeyPair } from '@certwright/core/pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLifecycleApp, type LifecycleApp } from './lifecycle-support.js';

/**
 * Concurrent enrollments commit in shared transactions (core/services/issuance/group-commit.ts):
 * each caller still sees the semantics of its own transaction.
 */

let app: LifecycleApp;
const clock = new ManualClock('2026-01-01T00:00:00Z');
const actor = { type: 'system' as const, id: 'group-commit-test' };

beforeAll(async () => {
  app = await createLifecycleApp({ clock });
});
afterAll(() => app.close());

async function csrDer(name: string): Promise<Uint8Array> {
  const { privateKey } = await generateKeyPair('ECDSA-P256');
  return createCertificationRequest({
    subject: [{ type: 'CN', value: name }],
    privateKey,
    subjectAltNames: [{ type: 'dns', value: name }],
  });
}

describe('enrollment group commit', () => {
  it('stores concurrent enrollments in shared transactions; one that fails stores nothing and costs the others nothing', async () => {
    const count = 24;
    const failing = 7;
    const names = Array.from({ length: count }, (_, i) => `gc${i}.group-commit.example.test`);
    const csrs = await Promise.all(names.map(csrDer));
    const head = await app.services.audit.head();
    const transactions = new Set<Storage>();
    const settled = await Promise.allSettled(
      names.map((_, i) =>
        app.services.pki.enrollment.enroll(
          actor,
          { profileId: 'prof-default', csrDer: csrs[i]!, source: 'EST' },
          {
            withinTransaction: async (tx, result) => {
              transactions.add(tx);
              // Written in the same transaction: rolled back with the failing body.
              await tx.certificates.update(result.certificate.id, { tags: ['group-commit'] });
              if (i === failing) throw new Error('the caller refuses this one');
            },
          },
        ),
      ),
    );

    expect(settled[failing]).toMatchObject({
      status: 'rejected',
      reason: { message: 'the caller refuses this one' },
    });
    const stored = settled.filter((s) => s.status === 'fulfilled').map((s) => s.value);
    expect(stored).toHaveLength(count - 1);
    // Several bodies shared one transaction (the requests were all in flight together).
    expect(transactions.size).toBeLessThan(count);

    for (const result of stored) {
      // The certificate returned without a read-back is the stored row, as of the body's end
      // except for the hook's own later change.
      const row = await app.storage.certificates.get(result.certificate.id);
      expect({ ...result.certificate, tags: ['group-commit'] }).toEqual(row);
      expect(row?.current_version_id).toBe(result.version.id);
      expect(await app.storage.versions.get(result.version.id)).toMatchObject({
        certificate_id: result.certificate.id,
        serial_number: result.version.serial_number,
      });
    }
    const refused = await app.services.certificates.list({ search: names[failing]! });
    expect(refused.total).toBe(0);

    // One event per stored enrollment, none for the refused one, and the chain verifies.
    const after = await app.services.audit.head();
    const events = await app.storage.audit.list({ action: 'certificate_enrolled', perPage: 100 });
    const ours = events.items.filter((e) => e.seq > head.seq);
    expect(ours.map((e) => e.resource_id).sort()).toEqual(stored.map((r) => r.certificate.id).sort());
    expect(after.seq).toBe(head.seq + count - 1);
    expect(await app.services.audit.verifyChain()).toMatchObject({ ok: true, head_seq: after.seq });
  });

  it('a row that fails only when the storage writes it, at another body or at the commit, refuses the one enrollment that wrote it', async () => {
    const taken = await app.services.pki.enrollment.enroll(actor, {
      profileId: 'prof-default',
      csrDer: await csrDer('taken.group-commit.example.test'),
      source: 'EST',
    });
    const count = 12;
    const failing = [3, count - 1]; // one in the middle of a batch, one likely last (fails at commit)
    const names = Array.from({ length: count }, (_, i) => `late${i}.group-commit.example.test`);
    const csrs = await Promise.all(names.map(csrDer));
    const bodies = new Map<Storage, number>();
    const settled = await Promise.allSettled(
      names.map((_, i) =>
        app.services.pki.enrollment.enroll(
          actor,
          { profileId: 'prof-default', csrDer: csrs[i]!, source: 'EST' },
          {
            withinTransaction: async (tx, result) => {
              bodies.set(tx, (bodies.get(tx) ?? 0) + 1);
              if (!failing.includes(i)) return;
              // A second certificate under a serial already taken: the storage writes it with
              // the transaction's other new certificates, after this hook returned.
              const { id: _, created_at: _c, updated_at: _u, ...certificate } = result.certificate;
              const { id: _v, certificate_id: _ci, ...version } = result.version;
              await tx.versions.createWithCertificate(
                { ...certificate, name: `copy of ${certificate.name}` },
                { ...version, serial_number: taken.version.serial_number, private_key_pem: null },
              );
            },
          },
        ),
      ),
    );
    // Bodies shared transactions (each refused one also ran alone, to find the body at fault).
    expect(Math.max(...bodies.values())).toBeGreaterThan(1);
    for (const [i, outcome] of settled.entries()) {
      if (failing.includes(i)) {
        expect(outcome).toMatchObject({ status: 'rejected', reason: { reason: 'conflict' } });
        expect((await app.services.certificates.list({ search: names[i]! })).total).toBe(0);
      } else {
        expect(outcome.status).toBe('fulfilled');
        const { certificate } = (outcome as PromiseFulfilledResult<{ certificate: { id: string } }>).value;
        expect(await app.storage.certificates.get(certificate.id)).not.toBeNull();
      }
    }
    expect(await app.services.audit.verifyChain()).toMatchObject({ ok: true });
  });

  it('a lone enrollment whose body fails is refused once, not retried', async () => {
    let runs = 0;
    await expect(
      app.services.pki.enrollment.enroll(
        actor,
        { profileId: 'prof-default', csrDer: await csrDer('lone.group-commit.example.test'), source: 'EST' },
        {
          withinTransaction: async () => {
            runs += 1;
            throw new Error('refused');
          },
        },
      ),
    ).rejects.toThrow('refused');
    expect(runs).toBe(1);
  });
});
