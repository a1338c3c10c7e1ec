import { defineConfig } from 'vite';

// `vite` (pnpm --filter @certwright/web dev) serves the console with hot reload and proxies the
// API to a running reference server: CW_API_ORIGIN, default https://localhost:8443 (docs/web.md).
const api = process.env.CW_API_ORIGIN ?? 'https://localhost:8443';
const proxied = ['/api', '/auth', '/.well-known', '/health', '/ready', '/docs'];

export default defineConfig({
  esbuild: { jsx: 'automatic' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The polyfill would be an inline script, which the Content-Security-Policy refuses.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: false,
    rollupOptions: {
      onwarn(warning, warn) {
        // React libraries mark modules "use client" for server-component bundlers; meaningless here.
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
  server: {
    proxy: Object.fromEntries(
      proxied.map((path) => [path, { target: api, changeOrigin: false, secure: false }]),
    ),
  },
});
