import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    name: 'api',
    // Test files share their worker's modules (root vitest.config.ts says why).
    isolate: false,
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Most files open an embedded database in beforeAll: seconds on a quiet machine, half a
    // minute on a loaded 2-core one. A ceiling, not a timing assertion (the CLI's --hookTimeout
    // does not reach a project's hooks).
    hookTimeout: 180_000,
  },
});
