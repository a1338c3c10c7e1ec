import type { Migration } from './types.js';

/**
 * Break-glass failures and lockouts kept on the credential row (docs/auth/breakglass.md): every
 * instance on the database sees one count and one lockout, with or without a shared Redis, and
 * a restart forgets neither.
 */
export const breakglassLockout: Migration = {
  version: 22,
  name: 'breakglass_lockout',
  async up(db, t) {
    await db.schema
      .alterTable('auth_breakglass_credentials')
      .addColumn('failed_attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('auth_breakglass_credentials').addColumn('failures_since', t.ts).execute();
    await db.schema.alterTable('auth_breakglass_credentials').addColumn('locked_until', t.ts).execute();
  },
};
