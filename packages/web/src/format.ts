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
