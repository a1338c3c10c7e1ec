export interface Percentiles {
  p50: number;
  p99: number;
  min: number;
  max: number;
}

/** Nearest-rank percentiles of `samples` (milliseconds); the input is not reordered. */
export function percentiles(samples: readonly number[]): Percentiles {
  const sorted = [...samples].sort((a, b) => a - b);
  const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number;
  return { p50: q(0.5), p99: q(0.99), min: sorted[0] as number, max: sorted[sorted.length - 1] as number };
}

/** Runs `fn` `runs` times, one after another, and returns the wall-clock percentiles. */
export async function measure(runs: number, fn: (run: number) => Promise<unknown>): Promise<Percentiles> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn(i);
    samples.push(performance.now() - t);
  }
  return percentiles(samples);
}
