import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    main: 'src/main.ts',
    quickstart: 'src/quickstart.ts',
    'mint-scep-challenge': 'src/mint-scep-challenge.ts',
  },
  format: ['esm'],
  dts: { entry: { index: 'src/index.ts' } },
  sourcemap: true,
  clean: true,
  target: 'node20',
});
