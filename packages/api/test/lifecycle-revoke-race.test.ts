/**
 * A revocation that commits while a renewal is being prepared or signed wins: the renewal
 * stores nothing, the certificate stays Revoked, and no unrevoked serial appears for it.
 * (Without the row lock and re-check the renewal set the certificate back to Active with a
 * fresh, unrevoked serial — an acknowledged revocation silently undone.)
 */
import { randomBytes } from 'node:crypto';
import { createServices, SecretBox, SYSTEM_ACTOR, silentLogger, systemClock } from '@certwright/core';
import { createPgliteStorage } from '@certwright/storage-pg';
import { afterAll, describe, expect, it } from 'vitest';

describe('renewal racing a revocation', () => {
  const state: { revokeNow?: () => Promise<void> } = {};
  const storagePromise = createPgliteStorage(
    { memory: true },
    { secretBox: new SecretBox(randomBytes(32)), clock: systemClock },
  );
  afterAll(async () => (await storagePromise).close());

  it('keeps the certificate revoked and stores no new version when the revocation lands between signing and storing', async () => {
    const storage = await storagePromise;
    await storage.migrate();
    const services = createServices(
      { storage, clock: systemClock, logger: silentLogger },
      { pki: { hooks: { afterSign: () => state.revokeNow?.() } } },
    );
    const owner = await services.owners.create(SYSTEM_ACTOR, { name: 'race owner' });
    const team = await services.teams.create(SYSTEM_ACTOR, { name: 'race team' });
    const issuer = await services.issuers.create(SYSTEM_ACTOR, { name: 'race CA', type: 'Local' });
    const cert = await services.certificates.create(SYSTEM_ACTOR, {
      name: 'race',
      common_name: 'race.example.test',
      renewal_policy_id: 'rp-default',
      issuer_id: issuer.id,
      owner_id: owner.id,
      team_id: team.id,
    });
    await services.pki.lifecycle.issue(SYSTEM_ACTOR, cert.id);
    state.revokeNow = async () => {
      state.revokeNow = undefined;
      await services.certificates.revoke(SYSTEM_ACTOR, cert.id, 'keyCompromise');
    };

    const error = await services.pki.lifecycle.renew(SYSTEM_ACTOR, cert.id).catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: 'invalid_state' });
    expect(String((error as Error).message)).toMatch(/became Revoked/);

    const after = await storage.certificates.require(cert.id);
    expect(after.status).toBe('Revoked');
    const versions = (await storage.versions.listForCertificate(cert.id)).items;
    expect(versions).toHaveLength(1);
    expect(versions.every((v) => v.revoked_at !== null)).toBe(true);
  });

  it('keeps the certificate revoked when the revocation lands after the status check, before the renewal job opens', async () => {
    // The window the soak bench found: the status is read, the key is generated (slow), then
    // the job opens and marks the certificate RenewalInProgress — over a Revoked status, which
    // the later re-check then no longer saw as Revoked.
    const storage = await storagePromise;
    await storage.migrate();
    const services = createServices({ storage, clock: systemClock, logger: silentLogger });
    const owner = await services.owners.create(SYSTEM_ACTOR, { name: 'early race owner' });
    const team = await services.teams.create(SYSTEM_ACTOR, { name: 'early race team' });
    const issuer = await services.issuers.create(SYSTEM_ACTOR, { name: 'early race CA', type: 'Local' });
    const cert = await services.certificates.create(SYSTEM_ACTOR, {
      name: 'early-race',
      common_name: 'early-race.example.test',
      renewal_policy_id: 'rp-default',
      issuer_id: issuer.id,
      owner_id: owner.id,
      team_id: team.id,
      profile_id: 'prof-default',
    });
    await services.pki.lifecycle.issue(SYSTEM_ACTOR, cert.id);
    // The renewal reads the certificate's profile after its status check: the revocation
    // commits right there.
    const profiles = storage.profiles;
    const readProfile = profiles.get.bind(profiles);
    let revokeNow: (() => Promise<unknown>) | undefined = () =>
      services.certificates.revoke(SYSTEM_ACTOR, cert.id, 'keyCompromise');
    profiles.get = async (id) => {
      const revoke = revokeNow;
      revokeNow = undefined;
      await revoke?.();
      return readProfile(id);
    };
    try {
      const error = await services.pki.lifecycle.renew(SYSTEM_ACTOR, cert.id).catch((e: unknown) => e);
      expect(revokeNow).toBeUndefined();
      expect(error).toMatchObject({ reason: 'invalid_state' });
    } finally {
      profiles.get = readProfile;
    }

    const after = await storage.certificates.require(cert.id);
    expect(after.status).toBe('Revoked');
    const versions = (await storage.versions.listForCertificate(cert.id)).items;
    expect(versions).toHaveLength(1);
    expect(versions.every((v) => v.revoked_at !== null)).toBe(true);
  });
});
