import { UsageError } from './exit-codes.js';

/** Durations as people write them: `30d`, `720h`, `1h30m`, `90s`, `2w` — whole numbers of units. */
const UNIT_MS: Record<string, number> = {
  w: 7 * 86_400_000,
  d: 86_400_000,
  h: 3_600_000,
  m: 60_000,
  s: 1000,
};
const DURATION = /^(?:\d{1,6}[wdhms])+$/;
/** A century: longer than any certificate, audit window or interval the server accepts. */
const MAX_MS = 100 * 365 * 86_400_000;

/** Milliseconds of a duration, or undefined when the text is not one. */
export function durationMs(text: string): number | undefined {
  if (text.length > 40 || !DURATION.test(text)) return undefined;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+)([wdhms])/g)) {
    total += Number(amount) * (UNIT_MS[unit as string] as number);
  }
  return total;
}

function requireDuration(flag: string, text: string): number {
  const ms = durationMs(text);
  if (ms === undefined)
    throw new UsageError(`${flag}: ${JSON.stringify(text)} is not a duration (e.g. 30d, 720h, 1h30m, 90s)`);
  if (ms > MAX_MS) throw new UsageError(`${flag}: ${text} is longer than 100 years`);
  return ms;
}

/** Which way a bare duration points: `--expires-before 30d` is ahead, `--from 7d` is ago. */
export type Direction = 'future' | 'past';

const RELATIVE = /^(?:now)?([+-])(.+)$/;

/**
 * An instant for a date-time flag: RFC 3339 as given (the server checks it), `now`, `now+30d` /
 * `+30d`, `now-7d` / `-7d`, or a bare duration pointing the flag's way.
 */
export function parseInstant(flag: string, text: string, direction: Direction, now: number): string {
  const value = text.trim();
  if (value === 'now') return new Date(now).toISOString();
  const relative = RELATIVE.exec(value);
  if (relative) {
    const ms = requireDuration(flag, relative[2] as string);
    return new Date(relative[1] === '+' ? now + ms : now - ms).toISOString();
  }
  const bare = durationMs(value);
  if (bare !== undefined) {
    const ms = requireDuration(flag, value);
    return new Date(direction === 'future' ? now + ms : now - ms).toISOString();
  }
  if (/^\d{4}-\d{2}-\d{2}T/.test(value)) return value;
  throw new UsageError(
    `${flag}: ${JSON.stringify(text)} is neither an RFC 3339 time (2026-12-01T00:00:00Z) nor a duration (30d, now-12h)`,
  );
}

/** A number of seconds or days for an integer field: a plain number as it is, or a duration converted. */
export function parseAmount(flag: string, text: string, unit: 'seconds' | 'days'): number {
  const value = text.trim();
  if (/^\d{1,12}$/.test(value)) return Number(value);
  const ms = requireDuration(flag, value);
  const size = unit === 'days' ? UNIT_MS.d : UNIT_MS.s;
  if (ms % (size as number) !== 0)
    throw new UsageError(
      `${flag}: ${value} is not a whole number of ${unit}${unit === 'days' ? ' (e.g. 720h, 30d)' : ''}`,
    );
  return ms / (size as number);
}

/**
 * `--not-after` of a certificate: a duration (`720h`) or an RFC 3339 time, as the whole days of
 * validity the server issues. A time is rounded up to the next whole day.
 */
export function validityDays(flag: string, text: string, now: number): number {
  const value = text.trim();
  if (durationMs(value) !== undefined) return parseAmount(flag, value, 'days');
  const at = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(at))
    throw new UsageError(
      `${flag}: ${JSON.stringify(text)} is neither a duration (720h, 90d) nor an RFC 3339 time`,
    );
  if (at <= now) throw new UsageError(`${flag}: ${value} is in the past`);
  return Math.ceil((at - now) / (UNIT_MS.d as number));
}
