import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources through the "source" export
// condition, so tests never run against a stale dist/.
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    // One temporary directory per run, removed at its end (vitest.temp-dir.ts).
    globalSetup: ['./vitest.temp-dir.ts'],
    projects: ['packages/*/vitest.config.ts', 'examples/*/vitest.config.ts', 'test/*/vitest.config.ts'],
  },
});
