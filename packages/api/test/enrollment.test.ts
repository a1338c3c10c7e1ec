import { X509Certificate } from 'node:crypto';
import { isCertwrightError, ManualClock } from '@certwright/core';
import { createCertificationRequest, generateKeyPair } from '@certwright/core/pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLifecycleApp, type LifecycleApp } from './lifecycle-support.js';

/** services.pki.enrollment.enroll: the issuance path of ACME finalize, EST and SCEP. */

let app: LifecycleApp;
const clock = new ManualClock('2026-01-01T00:00:00Z');
const actor = { type: 'system' as const, id: 'acme' };

beforeAll(async () => {
  app = await createLifecycleApp({ clock });
});
afterAll(() => app.close());

async function csrDer(names: string[], commonName: string | null = names[0] ?? null): Promise<Uint8Array> {
  const { privateKey } = await generateKeyPair('ECDSA-P256');
  return createCertificationRequest({
    subject: commonName ? [{ type: 'CN', value: commonName }] : [],
    privateKey,
    subjectAltNames: names.map((value) => ({ type: 'dns' as const, value })),
  });
}

async function refusal(promise: Promise<unknown>): Promise<{ code: string; reason: string }> {
  try {
    await promise;
  } catch (error) {
    if (isCertwrightError(error)) return { code: error.code, reason: error.reason };
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('enroll', () => {
  it('issues from a CSR: a new Active certificate with the profile enrollment settings, its chain and the provenance', async () => {
    const result = await app.services.pki.enrollment.enroll(actor, {
      profileId: 'prof-default',
      csrDer: await csrDer(['enrolled.example.test', 'www.enrolled.example.test']),
      source: 'ACME',
      names: { dns: ['www.enrolled.example.test', 'ENROLLED.example.test'], ip: [] },
      provenance: { acme_account_id: 'acct-1', acme_order_id: 'order-1' },
    });
    const profile = await app.services.profiles.get('prof-default');
    expect(result.certificate).toMatchObject({
      status: 'Active',
      source: 'ACME',
      profile_id: 'prof-default',
      issuer_id: profile.enrollment.issuer_id,
      owner_id: profile.enrollment.owner_id,
      team_id: profile.enrollment.team_id,
      renewal_policy_id: profile.enrollment.renewal_policy_id,
      current_version_id: result.version.id,
      metadata: { acme_account_id: 'acct-1', acme_order_id: 'order-1' },
    });
    const leaf = new X509Certificate(result.certificatePem);
    expect(leaf.subjectAltName).toBe('DNS:enrolled.example.test, DNS:www.enrolled.example.test');
    expect(result.chainPem.length).toBeGreaterThanOrEqual(1);
    expect(leaf.verify(new X509Certificate(result.chainPem[0]!).publicKey)).toBe(true);
    expect(leaf.serialNumber.toLowerCase().replace(/^0+/, '')).toBe(result.version.serial_number);

    const events = await app.storage.audit.list({ resource_id: result.certificate.id, perPage: 10 });
    const enrolled = events.items.find((e) => e.action === 'certificate_enrolled');
    expect(enrolled?.details).toMatchObject({
      source: 'ACME',
      provenance: { acme_account_id: 'acct-1', acme_order_id: 'order-1' },
    });
  });

  it('refuses a CSR whose names differ from the authorized ones with names_mismatch, storing nothing', async () => {
    const before = (await app.services.certificates.list({ source: 'ACME' })).total;
    for (const names of [
      { dns: ['a.example.test'], ip: [] }, // the CSR also asks for b.example.test
      { dns: ['a.example.test', 'b.example.test', 'c.example.test'], ip: [] }, // the CSR lacks c
    ]) {
      expect(
        await refusal(
          app.services.pki.enrollment.enroll(actor, {
            profileId: 'prof-default',
            csrDer: await csrDer(['a.example.test', 'b.example.test']),
            source: 'ACME',
            names,
          }),
        ),
      ).toEqual({ code: 'validation_failed', reason: 'names_mismatch' });
    }
    expect((await app.services.certificates.list({ source: 'ACME' })).total).toBe(before);
  });

  it('rolls everything back when the caller hook throws inside the transaction: no certificate, no version', async () => {
    const before = await app.services.certificates.list({ source: 'EST', per_page: 500 });
    let seen: string | undefined;
    await expect(
      app.services.pki.enrollment.enroll(
        actor,
        { profileId: 'prof-default', csrDer: await csrDer(['hook.example.test']), source: 'EST' },
        {
          withinTransaction: async (tx, result) => {
            seen = result.certificate.id;
            // The hook sees the stored records in its transaction…
            expect(await tx.versions.get(result.version.id)).not.toBeNull();
            throw new Error('order write failed');
          },
        },
      ),
    ).rejects.toThrow('order write failed');
    expect(seen).toMatch(/.+/);
    // …and after the rollback neither exists.
    expect(await app.storage.certificates.get(seen!)).toBeNull();
    expect((await app.storage.versions.listForCertificate(seen!)).items).toEqual([]);
    expect((await app.services.certificates.list({ source: 'EST', per_page: 500 })).total).toBe(before.total);
  });

  it('re-enrolls: a new version of the same certificate with a new serial', async () => {
    const first = await app.services.pki.enrollment.enroll(actor, {
      profileId: 'prof-default',
      csrDer: await csrDer(['device.example.test']),
      source: 'SCEP',
    });
    clock.advance(10 * 86_400_000);
    const second = await app.services.pki.enrollment.enroll(actor, {
      profileId: 'prof-default',
      csrDer: await csrDer(['device.example.test']),
      source: 'SCEP',
      renewsCertificateId: first.certificate.id,
    });
    expect(second.certificate.id).toBe(first.certificate.id);
    expect(second.version.id).not.toBe(first.version.id);
    expect(second.version.serial_number).not.toBe(first.version.serial_number);
    expect(second.certificate.current_version_id).toBe(second.version.id);
    expect(second.certificate.last_renewal_at).toEqual(clock.now());
    const versions = await app.services.certificates.versions(first.certificate.id);
    expect(versions.total).toBe(2);
  });

  it('refuses a validity longer than the profile allows with validity_not_allowed', async () => {
    const profile = await app.services.profiles.get('prof-default');
    expect(
      await refusal(
        app.services.pki.enrollment.enroll(actor, {
          profileId: 'prof-default',
          csrDer: await csrDer(['long.example.test']),
          source: 'EST',
          notAfter: new Date(clock.now().getTime() + (profile.max_validity_days + 2) * 86_400_000),
        }),
      ),
    ).toEqual({ code: 'validation_failed', reason: 'validity_not_allowed' });
  });
});
