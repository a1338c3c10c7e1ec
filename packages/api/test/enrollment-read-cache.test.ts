import { isCertwrightError, ManualClock } from '@certwright/core';
import { createCertificationRequest, generateKeyPair } from '@certwright/core/pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLifecycleApp, type LifecycleApp } from './lifecycle-support.js';

/**
 * Enrollment reuses its reads of the profile, the enabled policy rules and the issuer for a short time
 * (docs/api/lifecycle.md, "Issuance pipeline"): a change made through this process's services
 * must still decide the very next enrollment.
 */

let app: LifecycleApp;
const clock = new ManualClock('2026-01-01T00:00:00Z');
const actor = { type: 'system' as const, id: 'est' };

beforeAll(async () => {
  // A long reuse, so that only the revisions can make these tests pass.
  app = await createLifecycleApp({ clock, pki: { enrollmentReadCacheMs: 3_600_000 } });
});
afterAll(() => app.close());

async function enroll(name: string) {
  const { privateKey } = await generateKeyPair('ECDSA-P256');
  const csrDer = await createCertificationRequest({
    subject: [{ type: 'CN', value: name }],
    privateKey,
    subjectAltNames: [{ type: 'dns', value: name }],
  });
  return app.services.pki.enrollment.enroll(actor, { profileId: 'prof-default', csrDer, source: 'EST' });
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (isCertwrightError(error)) return error.reason;
    throw error;
  }
  return 'issued';
}

describe('enrollment read reuse', () => {
  it('applies a profile change made through the services to the next enrollment', async () => {
    await enroll('before.example.test');
    const profile = await app.services.profiles.get('prof-default');
    await app.services.profiles.update(actor, 'prof-default', {
      allowed_key_algorithms: [{ algorithm: 'Ed25519' }],
    });
    expect(await refusal(enroll('after.example.test'))).toBe('key_not_allowed');
    await app.services.profiles.update(actor, 'prof-default', {
      allowed_key_algorithms: profile.allowed_key_algorithms,
    });
    expect(await refusal(enroll('restored.example.test'))).toBe('issued');
  });

  it('applies a policy rule created, then deleted, through the services to the next enrollment', async () => {
    await enroll('free.example.test');
    const rule = await app.services.policyRules.create(actor, {
      name: 'only elsewhere',
      type: 'AllowedDomains',
      severity: 'Error',
      config: { allowed_domains: ['elsewhere.test'] },
    });
    expect(await refusal(enroll('blocked.example.test'))).toBe('name_not_allowed');
    await app.services.policyRules.delete(actor, rule.id);
    expect(await refusal(enroll('free-again.example.test'))).toBe('issued');
  });

  it("applies the issuer's disable, then enable, through the services to the next enrollment", async () => {
    const { issuer_id: issuerId } = (await app.services.profiles.get('prof-default')).enrollment!;
    await enroll('signed.example.test');
    await app.services.issuers.update(actor, issuerId!, { enabled: false });
    expect(await refusal(enroll('refused.example.test'))).toBe('issuer_disabled');
    await app.services.issuers.update(actor, issuerId!, { enabled: true });
    expect(await refusal(enroll('signed-again.example.test'))).toBe('issued');
  });
});
