import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  esbuild: { jsx: 'automatic' },
  test: {
    name: 'web',
    // Test files share their worker's modules (root vitest.config.ts says why).
    isolate: false,
    // Component tests choose happy-dom per file; the browser test drives Chromium from Node.
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    testTimeout: 180_000,
    hookTimeout: 180_000,
  },
});
