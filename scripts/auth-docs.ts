/**
 * Rewrites the generated tables of docs/auth/permissions.md from the route definitions.
 * `pnpm docs:auth` writes the page; `pnpm docs:auth --check` exits 1 while it is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { Services } from '@certwright/core';
import { renderPermissionDoc } from '../packages/api/src/auth/permission-docs.js';
import { createHandler } from '../packages/api/src/index.js';

/** Route modules only keep references to their services while the table is built. */
const inert: Services = new Proxy({} as Services, {
  get: (_, prop) => (prop === 'then' ? undefined : inert),
});

const handler = createHandler({
  auth: { type: 'api-key', secret: 'docs-only-secret-0123456789' },
  services: inert,
  metrics: async () => ({ contentType: 'text/plain', body: '' }),
});
const file = new URL('../docs/auth/permissions.md', import.meta.url);
const page = readFileSync(file, 'utf8');
const next = renderPermissionDoc(page, handler.routes);
if (process.argv.includes('--check')) {
  if (next !== page) {
    console.error('docs/auth/permissions.md is stale: run `pnpm docs:auth`');
    process.exit(1);
  }
} else if (next !== page) {
  writeFileSync(file, next);
  console.log('docs/auth/permissions.md updated');
}
