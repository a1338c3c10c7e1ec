import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    name: 'notify-smtp',
    // Test files share their worker's modules (root vitest.config.ts says why).
    isolate: false,
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    hookTimeout: 180_000,
  },
});
