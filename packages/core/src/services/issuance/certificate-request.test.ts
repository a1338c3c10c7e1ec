import { describe, expect, it } from 'vitest';
import type { ManagedCertificate } from '../../domain/certificate.js';
import { isCertwrightError } from '../../errors.js';
import { DEFAULT_MAX_VALIDITY_DAYS_WITHOUT_PROFILE, signingMaterialFor } from './certificate-request.js';

const DAY = 86_400_000;
const now = new Date('2026-01-01T00:00:00Z');
const certificate = {
  id: 'mc-1',
  common_name: 'app.example.test',
  sans: ['www.example.test'],
} as ManagedCertificate;

const refusal = async (p: Promise<unknown>) =>
  p.then(
    () => 'issued',
    (e) => (isCertwrightError(e) ? e.reason : 'other'),
  );

describe('validity of a certificate without a profile', () => {
  it('is capped by the configured maximum, not by the CA lifetime', async () => {
    const at = (days: number, cap: number) =>
      signingMaterialFor(now, certificate, null, { keyAlgorithm: 'ECDSA-P256', validityDays: days }, cap);
    expect(DEFAULT_MAX_VALIDITY_DAYS_WITHOUT_PROFILE).toBe(397);
    expect(await refusal(at(398, 397))).toBe('validity_not_allowed');
    expect(await refusal(at(31, 30))).toBe('validity_not_allowed');
    const material = await at(30, 30);
    expect(material.request.notAfter.getTime() - now.getTime()).toBe(30 * DAY);
  });

  it('defaults to 90 days, or to the cap when the cap is shorter', async () => {
    const defaulted = await signingMaterialFor(now, certificate, null, { keyAlgorithm: 'ECDSA-P256' }, 397);
    expect(defaulted.request.notAfter.getTime() - now.getTime()).toBe(90 * DAY);
    const short = await signingMaterialFor(now, certificate, null, { keyAlgorithm: 'ECDSA-P256' }, 14);
    expect(short.request.notAfter.getTime() - now.getTime()).toBe(14 * DAY);
  });
});
