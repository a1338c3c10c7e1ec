import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources through the "source" export
// condition, so tests never run against a stale dist/.
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    projects: ['packages/*/vitest.config.ts', 'examples/*/vitest.config.ts', 'test/*/vitest.config.ts'],
  },
});
