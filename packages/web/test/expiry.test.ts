import { describe, expect, it } from 'vitest';
import { relativeTime } from '../src/expiry';

const now = new Date('2026-06-01T12:00:00Z');
const at = (days: number) => new Date(now.getTime() + days * 86_400_000);

describe('relative expiry', () => {
  it('counts days up to three months, then months, then years, in both directions', () => {
    expect(relativeTime(at(1), now)).toBe('tomorrow');
    expect(relativeTime(at(2), now)).toBe('in 2 days');
    expect(relativeTime(at(89.9), now)).toBe('in 89 days');
    expect(relativeTime(at(120), now)).toBe('in 4 months');
    expect(relativeTime(at(800), now)).toBe('in 2 years');
    expect(relativeTime(at(-3), now)).toBe('3 days ago');
    expect(relativeTime(new Date(now.getTime() + 5 * 3_600_000), now)).toBe('in 5 hours');
  });
});
