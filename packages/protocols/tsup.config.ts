import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    'acme/index': 'src/acme/index.ts',
    'crl/index': 'src/crl/index.ts',
    'est/index': 'src/est/index.ts',
    'shared/mount': 'src/shared/mount.ts',
    'scep/index': 'src/scep/index.ts',
    'ocsp/index': 'src/ocsp/index.ts',
  },
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
});
