import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'net/index': 'src/net/index.ts',
    'node/index': 'src/node/index.ts',
    'pki/index': 'src/pki/index.ts',
    'testing/index': 'src/testing/index.ts',
  },
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  // The contract suites in ./testing import vitest from the consumer's test run; never bundle it.
  external: ['vitest'],
});
