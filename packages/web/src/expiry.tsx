import { exactDate, formatDate } from './format';

const DAY = 86_400;
let relative: Intl.RelativeTimeFormat | null = null;

/**
 * "in 3 days", "tomorrow", "2 months ago": the distance from now in the largest whole unit,
 * in the browser's language (Intl.RelativeTimeFormat, made once).
 */
export function relativeTime(value: string | Date, now: Date = new Date()): string {
  const date = typeof value === 'string' ? new Date(value) : value;
  const seconds = (date.getTime() - now.getTime()) / 1000;
  relative ??= new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  const abs = Math.abs(seconds);
  // [unit, shown from, length]: days up to three months (renewal work counts in days, and
  // "in 2 months" would hide up to 30 of them), months up to two years.
  const units: [Intl.RelativeTimeFormatUnit, number, number][] = [
    ['year', 2 * 365 * DAY, 365 * DAY],
    ['month', 90 * DAY, 30 * DAY],
    ['day', DAY, DAY],
    ['hour', 3_600, 3_600],
    ['minute', 60, 60],
  ];
  for (const [unit, from, size] of units) {
    if (abs >= from) return relative.format(Math.trunc(seconds / size), unit);
  }
  return relative.format(Math.trunc(seconds), 'second');
}

/** An expiry: relative ("in 12 days") and the absolute date, the exact instant on hover. */
export function Expiry({ value, now }: { value: string | null | undefined; now?: Date }) {
  if (!value) return <span className="muted">—</span>;
  const past = new Date(value).getTime() < (now ?? new Date()).getTime();
  return (
    <time dateTime={value} title={exactDate(value)} className={past ? 'expiry past' : 'expiry'}>
      {relativeTime(value, now)} <span className="muted">({formatDate(value, false)})</span>
    </time>
  );
}
