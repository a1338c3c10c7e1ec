import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    name: 'key-custody-pkcs11',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    hookTimeout: 180_000,
  },
});
