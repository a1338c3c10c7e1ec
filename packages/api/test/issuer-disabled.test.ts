import { isCertwrightError, ManualClock, SYSTEM_ACTOR } from '@certwright/core';
import { createCertificationRequest, generateKeyPair } from '@certwright/core/pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLifecycleApp, type LifecycleApp } from './lifecycle-support.js';

/**
 * A disabled issuer signs nothing — issue, renew, the issuance worker, the renewal scan, bulk
 * renewal, enrollment — and still publishes CRL and OCSP status for what it issued.
 */

const _DAY = 86_400_000;
let app: LifecycleApp;
const clock = new ManualClock('2026-01-01T00:00:00Z');

beforeAll(async () => {
  app = await createLifecycleApp({ clock });
});
afterAll(() => app.close());

async function newIssuer(name: string) {
  return app.services.issuers.create(SYSTEM_ACTOR, {
    name: `${name}-${clock.now().getTime()}-${Math.floor(performance.now())}`,
    type: 'Local',
  });
}

async function disable(issuerId: string) {
  await app.services.issuers.update(SYSTEM_ACTOR, issuerId, { enabled: false });
}

async function reasonOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (isCertwrightError(error)) return `${error.code}/${error.reason}`;
    throw error;
  }
  return 'no error';
}

describe('a disabled issuer signs nothing', () => {
  it('refuses issue and renew with 409 issuer_disabled and leaves the certificate as it was', async () => {
    const issuer = await newIssuer('disabled-sync');
    const fresh = await app.createCertificate({ issuer_id: issuer.id });
    const issued = await app.createCertificate({ issuer_id: issuer.id });
    expect((await app.json('POST', `/api/v1/certificates/${issued.id}/issue`, {})).status).toBe(200);
    await disable(issuer.id);

    const issue = await app.json('POST', `/api/v1/certificates/${fresh.id}/issue`, {});
    expect(issue.status).toBe(409);
    expect(issue.body).toMatchObject({ error: 'conflict', reason: 'issuer_disabled' });
    const renew = await app.json('POST', `/api/v1/certificates/${issued.id}/renew`, {});
    expect(renew.status).toBe(409);
    expect(renew.body.reason).toBe('issuer_disabled');

    expect((await app.services.certificates.get(fresh.id)).status).toBe('Pending');
    expect((await app.services.certificates.get(issued.id)).status).toBe('Active');
    expect((await app.services.certificates.versions(issued.id)).total).toBe(1);
    expect((await app.services.jobs.list({ certificate_id: fresh.id })).data).toEqual([]);
  });

  it('the issuance worker records issuer_disabled on the job and stores no version', async () => {
    const issuer = await newIssuer('disabled-worker');
    await disable(issuer.id);
    const cert = await app.createCertificate({ issuer_id: issuer.id });
    await app.services.pki.lifecycle.processDueJobs();
    const jobs = await app.services.jobs.list({ certificate_id: cert.id, type: 'Issuance' });
    expect(jobs.data).toHaveLength(1);
    expect(jobs.data[0]!.last_error).toMatch(/disabled/);
    expect((await app.services.certificates.versions(cert.id)).total).toBe(0);
  });

  it('the renewal scan opens no renewal job for it and counts it; bulk renew reports issuer_disabled', async () => {
    const policy = await app.services.renewalPolicies.create(SYSTEM_ACTOR, {
      name: `disabled-window-${Math.floor(performance.now())}`,
      renewal_window_days: 60,
      alert_thresholds_days: [],
    });
    const issuer = await newIssuer('disabled-renewal');
    const cert = await app.createCertificate({ issuer_id: issuer.id, renewal_policy_id: policy.id });
    await app.services.pki.lifecycle.issue(SYSTEM_ACTOR, cert.id, { validity_days: 30 });
    await disable(issuer.id);

    const report = await app.services.pki.renewal.runRenewalScan();
    expect(report.issuer_disabled).toBeGreaterThanOrEqual(1);
    expect((await app.services.jobs.list({ certificate_id: cert.id, type: 'Renewal' })).data).toEqual([]);
    expect((await app.services.certificates.get(cert.id)).status).toBe('Active');

    const bulk = await app.services.bulk.renew(SYSTEM_ACTOR, { certificate_ids: [cert.id] });
    expect(bulk).toMatchObject({ total_renewed: 0, total_failed: 1 });
    expect(bulk.errors).toEqual([
      expect.objectContaining({ certificate_id: cert.id, error: 'issuer_disabled' }),
    ]);
    expect((await app.services.certificates.get(cert.id)).status).toBe('Active');
  });

  it('enroll refuses a profile whose enrollment issuer is disabled', async () => {
    const issuer = await newIssuer('disabled-enroll');
    const profile = await app.services.profiles.create(SYSTEM_ACTOR, {
      name: `enroll-disabled-${Math.floor(performance.now())}`,
      max_validity_days: 90,
      key_generation: 'server',
      enrollment: {
        issuer_id: issuer.id,
        owner_id: app.ids.owner,
        team_id: app.ids.team,
        renewal_policy_id: 'rp-default',
      },
    } as never);
    await disable(issuer.id);
    const { privateKey } = await generateKeyPair('ECDSA-P256');
    const csrDer = createCertificationRequest({
      subject: [{ type: 'CN', value: 'est.example.test' }],
      privateKey,
      subjectAltNames: [{ type: 'dns', value: 'est.example.test' }],
    });
    expect(
      await reasonOf(
        app.services.pki.enrollment.enroll(SYSTEM_ACTOR, { profileId: profile.id, csrDer, source: 'EST' }),
      ),
    ).toBe('conflict/issuer_disabled');
    expect((await app.services.certificates.list({ issuer_id: issuer.id })).total).toBe(0);
  });

  it('keeps publishing CRL and OCSP status for what it issued', async () => {
    const issuer = await newIssuer('disabled-crl');
    const cert = await app.createCertificate({ issuer_id: issuer.id });
    const { version } = await app.services.pki.lifecycle.issue(SYSTEM_ACTOR, cert.id);
    await disable(issuer.id);
    expect(
      (await app.json('POST', `/api/v1/certificates/${cert.id}/revoke`, { reason: 'keyCompromise' })).status,
    ).toBe(200);
    const res = await app.call('GET', `/.well-known/pki/crl/${issuer.id}`);
    expect(res.status).toBe(200);
    const der = Buffer.from(await res.arrayBuffer());
    // The revoked serial is listed: the CRL carries it as an INTEGER's content octets.
    expect(der.toString('hex')).toContain(version!.serial_number);
    const human = await app.call(
      'GET',
      `/.well-known/pki/ocsp/${issuer.id}/serial/${version!.serial_number}`,
    );
    expect(human.status).toBe(200);
    expect(await human.json()).toMatchObject({ status: 'revoked' });
  });
});
