import { z } from 'zod';
import type { DeltaCrlSchedule } from './connector.js';
import { pointerList } from './local-ca-urls.js';

/**
 * A Local issuer's delta CRL settings (RFC 5280 §5.2.4; docs/pki.md, "Delta CRLs"):
 *
 * - `enabled`: publish a delta CRL at `/.well-known/pki/crl/{issuer_id}/delta` and name it in
 *   the freshestCRL extension of issued certificates;
 * - `interval`: how long one delta stands (its nextUpdate − thisUpdate) and how often it is
 *   rebuilt without a revocation (a revocation rebuilds it at once); default `1h`;
 * - `base_interval`: how often the complete (base) CRL is rebuilt; with deltas a revocation
 *   no longer rebuilds it, so relying parties keep their cached base. Default: the service's
 *   CRL refresh (1 h unless configured);
 * - `urls`: what freshestCRL names instead of the service's delta URL.
 *
 * Durations are a number and a unit: `90s`, `15m`, `6h`, `2d`.
 */

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const MIN_INTERVAL_MS = 60_000;
const MAX_INTERVAL_MS = 7 * UNIT_MS.d;
const MAX_BASE_INTERVAL_MS = 30 * UNIT_MS.d;

/** Milliseconds of a `<n><s|m|h|d>` duration; undefined when it is not one. */
export function durationMs(value: string): number | undefined {
  const m = /^([1-9]\d{0,5})([smhd])$/.exec(value);
  return m ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : undefined;
}

const duration = (maxMs: number, maxText: string) =>
  z.string().superRefine((value, ctx) => {
    const ms = durationMs(value);
    if (ms === undefined) ctx.addIssue({ code: 'custom', message: 'must be a duration like 15m, 6h or 1d' });
    else if (ms < MIN_INTERVAL_MS || ms > maxMs)
      ctx.addIssue({ code: 'custom', message: `must be between 1m and ${maxText}` });
  });

export const deltaCrlSchema = z
  .object({
    enabled: z.boolean(),
    interval: duration(MAX_INTERVAL_MS, '7d').optional(),
    base_interval: duration(MAX_BASE_INTERVAL_MS, '30d').optional(),
    urls: pointerList.optional(),
  })
  .strict()
  .superRefine((value, ctx) => {
    const delta = durationMs(value.interval ?? '1h');
    const base = value.base_interval === undefined ? undefined : durationMs(value.base_interval);
    if (delta !== undefined && base !== undefined && base < delta)
      ctx.addIssue({
        code: 'custom',
        path: ['base_interval'],
        message: 'must not be shorter than interval: a delta outliving its base is never used',
      });
  });

export type DeltaCrlConfig = z.infer<typeof deltaCrlSchema>;

/** The schedule the CRL service works with; undefined when deltas are off. */
export function deltaSchedule(config: DeltaCrlConfig | undefined): DeltaCrlSchedule | undefined {
  if (!config?.enabled) return undefined;
  const baseIntervalMs = config.base_interval === undefined ? undefined : durationMs(config.base_interval);
  return {
    intervalMs: durationMs(config.interval ?? '1h')!,
    ...(baseIntervalMs !== undefined ? { baseIntervalMs } : {}),
  };
}
