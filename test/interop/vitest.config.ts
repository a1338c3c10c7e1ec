import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    name: 'interop',
    // Test files share their worker's modules (root vitest.config.ts says why).
    isolate: false,
    // The project root is this directory, so this is test/interop/**/*.test.ts.
    include: ['**/*.test.ts'],
    // Real servers and handshakes: generous, but these are not timing assertions.
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
