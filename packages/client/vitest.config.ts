import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    name: 'client',
    // Test files share their worker's modules (root vitest.config.ts says why).
    isolate: false,
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // These tests start a real server process and run the clients as subprocesses: generous
    // ceilings for a loaded 2-core machine, not timing assertions.
    testTimeout: 180_000,
    hookTimeout: 180_000,
  },
});
