import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    name: 'server',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // These tests start real server processes (TLS, PGlite); start-up alone takes seconds.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
