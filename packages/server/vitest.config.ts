import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    name: 'server',
    // Test files share their worker's modules (root vitest.config.ts says why).
    isolate: false,
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // These tests start real server processes (TLS, PGlite); start-up alone takes seconds, and
    // much longer on a loaded machine (PGlite's first open compiles its WebAssembly). Ceilings,
    // not timing assertions.
    testTimeout: 180_000,
    hookTimeout: 180_000,
  },
});
