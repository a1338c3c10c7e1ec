import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    name: 'upgrade',
    // Test files share their worker's modules (root vitest.config.ts says why).
    isolate: false,
    // The project root is this directory, so this is test/upgrade/**/*.test.ts.
    include: ['**/*.test.ts'],
    // The first run on a machine builds release 2.0.0 (install + JavaScript build) in beforeAll;
    // later runs find it in the cache. Ceilings for a loaded machine, not timing assertions.
    hookTimeout: 600_000,
    testTimeout: 600_000,
  },
});
