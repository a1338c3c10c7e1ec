import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources through the "source" export
// condition, so tests never run against a stale dist/.
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    // One temporary directory per run, removed at its end (vitest.temp-dir.ts).
    globalSetup: ['./vitest.temp-dir.ts'],
    // Two test files at a time at least: vitest's default in a run is one fewer than the cores, a
    // single file at a time on a 2-core machine, where most files spend much of their time waiting
    // on real servers, clients and databases (CPU 25–50 % idle over a whole run). Every project
    // sets hookTimeout itself (a ceiling for set-up beside another file, not a timing assertion):
    // the CLI's --hookTimeout does not reach a project's hooks.
    // Every project sets `isolate: false`: the files a worker runs share one module graph, so the
    // workspace's TypeScript, PGlite's WebAssembly and the big dependencies are loaded once per
    // worker rather than once per file (import time was a third of a run's worker time). What a
    // file starts it stops in its own hooks; no file mocks a module (docs/development.md).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // `.ci/run` sets CERTWRIGHT_TEST_TIMINGS to print the slowest files at its end.
    reporters: process.env.CERTWRIGHT_TEST_TIMINGS
      ? ['default', './scripts/test-timings-reporter.ts']
      : ['default'],
    projects: ['packages/*/vitest.config.ts', 'examples/*/vitest.config.ts', 'test/*/vitest.config.ts'],
  },
});
