import { describe, expect, it } from 'vitest';
import { exactDate, formatDate } from '../src/format';

describe('dates as the console shows them', () => {
  const instants = ['2026-01-31T23:59:00Z', '2026-07-04T08:05:00.000+02:00', '2030-12-01T00:00:00Z'];

  it('formats every date in the browser’s locale and zone, the same on every call (cached formatters)', () => {
    for (const text of instants) {
      const date = new Date(text);
      expect(formatDate(text)).toBe(
        date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }),
      );
      expect(formatDate(date, false)).toBe(date.toLocaleDateString(undefined, { dateStyle: 'medium' }));
      const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
      expect(exactDate(text)).toBe(
        `${date.toLocaleString(undefined, { dateStyle: 'full', timeStyle: 'long' })} (${zone}) — ${date.toISOString()}`,
      );
    }
    // A date-only and a date-time call in turn do not share a formatter.
    expect(formatDate(instants[0], false)).not.toBe(formatDate(instants[0]));
  });

  it('shows a dash for no date and the text itself for a date it cannot read', () => {
    expect(formatDate(null)).toBe('—');
    expect(formatDate('not a date')).toBe('not a date');
    expect(exactDate(undefined)).toBe('');
  });
});
