import { describe, expect, it } from 'vitest';
import { renewalWindow } from './renewal-info.js';

const DAY = 86_400_000;
const notBefore = new Date('2026-01-01T00:00:00Z');
const notAfter = new Date(notBefore.getTime() + 90 * DAY);

describe('ACME renewal windows', () => {
  it('opens renewal_window_days before expiry and closes at half of it', () => {
    const w = renewalWindow({ notBefore, notAfter }, 30, { now: notBefore, revoked: false });
    expect(w.start.toISOString()).toBe(new Date(notAfter.getTime() - 30 * DAY).toISOString());
    expect(w.end.toISOString()).toBe(new Date(notAfter.getTime() - 15 * DAY).toISOString());
  });

  it('uses the last third of the validity without a policy or when the policy window exceeds the lifetime', () => {
    const third = new Date(notAfter.getTime() - 30 * DAY).toISOString();
    expect(
      renewalWindow({ notBefore, notAfter }, null, { now: notBefore, revoked: false }).start.toISOString(),
    ).toBe(third);
    const w = renewalWindow({ notBefore, notAfter }, 120, { now: notBefore, revoked: false });
    expect(w.start.toISOString()).toBe(third);
    expect(w.end.toISOString()).toBe(notAfter.toISOString());
  });

  it('asks for renewal at once (now to one day later) after expiry or revocation', () => {
    const later = new Date(notAfter.getTime() + DAY);
    const expired = renewalWindow({ notBefore, notAfter }, 30, { now: later, revoked: false });
    expect([expired.start.getTime(), expired.end.getTime()]).toEqual([
      later.getTime(),
      later.getTime() + DAY,
    ]);
    const revoked = renewalWindow({ notBefore, notAfter }, 30, { now: notBefore, revoked: true });
    expect(revoked.start.getTime()).toBe(notBefore.getTime());
  });
});
