/**
 * Formatters made once: `toLocaleString(…, options)` builds a new Intl.DateTimeFormat on every
 * call, which costs about a millisecond each on a loaded machine — 25 inventory rows format
 * three dates apiece, so a page of rows spent over 100 ms just creating formatters.
 * (Made on first use, in the browser's locale and time zone, which do not change in a session.)
 */
const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(key: 'date' | 'dateTime' | 'exact'): Intl.DateTimeFormat {
  let f = formatters.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(
      undefined,
      key === 'date'
        ? { dateStyle: 'medium' }
        : key === 'dateTime'
          ? { dateStyle: 'medium', timeStyle: 'short' }
          : { dateStyle: 'full', timeStyle: 'long' },
    );
    formatters.set(key, f);
  }
  return f;
}

/** Dates in the user's time zone; the exact instant goes into the title (shown on hover). */
export function formatDate(value: string | Date | null | undefined, withTime = true): string {
  if (!value) return '—';
  const date = typeof value === 'string' ? new Date(value) : value;
  if (Number.isNaN(date.getTime())) return String(value);
  return formatter(withTime ? 'dateTime' : 'date').format(date);
}

export function exactDate(value: string | Date | null | undefined): string {
  if (!value) return '';
  const date = typeof value === 'string' ? new Date(value) : value;
  if (Number.isNaN(date.getTime())) return String(value);
  const exact = formatter('exact');
  return `${exact.format(date)} (${exact.resolvedOptions().timeZone}) — ${date.toISOString()}`;
}

/** Buckets expiry instants into `weeks` weekly bins starting at `now` (for the timeline chart). */
export function expiryBuckets(
  instants: readonly string[],
  now: Date,
  days = 90,
  binDays = 7,
): { start: Date; end: Date; count: number }[] {
  const bins: { start: Date; end: Date; count: number }[] = [];
  for (let offset = 0; offset < days; offset += binDays) {
    const start = new Date(now.getTime() + offset * 86_400_000);
    const end = new Date(now.getTime() + Math.min(offset + binDays, days) * 86_400_000);
    bins.push({ start, end, count: 0 });
  }
  for (const instant of instants) {
    const time = new Date(instant).getTime();
    const bin = bins.find((b) => time >= b.start.getTime() && time < b.end.getTime());
    if (bin) bin.count += 1;
  }
  return bins;
}

/** Some routes type their timestamps loosely; this makes one a string (or null) for DateTime. */
export function iso(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return value instanceof Date ? value.toISOString() : String(value);
}

/** A list typed as text: items separated by commas, spaces or new lines; empty items dropped. */
export function listOf(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((t) => t.trim())
    .filter((t) => t !== '');
}
