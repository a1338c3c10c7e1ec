/**
 * End-of-life dates of Node.js release lines (the Node.js release schedule): the server warns
 * at start-up on a runtime past its end of life, since it no longer receives security fixes.
 * Odd-numbered lines never become LTS and end about two months after the next even line.
 */
export const NODE_END_OF_LIFE: Readonly<Record<number, string>> = Object.freeze({
  18: '2025-04-30',
  19: '2023-06-01',
  20: '2026-04-30',
  21: '2024-06-01',
  22: '2027-04-30',
  23: '2025-06-01',
  24: '2028-04-30',
  25: '2026-06-01',
  26: '2029-04-30',
});

/** The Node.js line the documentation recommends (Active LTS). */
export const RECOMMENDED_NODE_MAJOR = 24;

/**
 * Whether `version` (e.g. `v20.19.2`) is past its end of life on `now`, and when that was.
 * Lines older than the table are past it; lines newer than the table are not known to be.
 */
export function endOfLife(version: string, now: Date): { major: number; date: string } | undefined {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1]);
  if (!Number.isInteger(major)) return undefined;
  const known = Object.keys(NODE_END_OF_LIFE).map(Number);
  const date = NODE_END_OF_LIFE[major] ?? (major < Math.min(...known) ? 'before 2023' : undefined);
  if (date === undefined) return undefined;
  if (date !== 'before 2023' && now.getTime() < Date.parse(`${date}T00:00:00Z`)) return undefined;
  return { major, date };
}
