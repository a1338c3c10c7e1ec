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
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: ['packages/*/vitest.config.ts', 'examples/*/vitest.config.ts', 'test/*/vitest.config.ts'],
  },
});
