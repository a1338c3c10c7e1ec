import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'deploy',
    // Test files share their worker's modules (root vitest.config.ts says why).
    isolate: false,
    // The project root is this directory, so this is test/deploy/**/*.test.ts.
    include: ['**/*.test.ts'],
    hookTimeout: 60_000,
  },
});
