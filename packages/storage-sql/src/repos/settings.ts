import type { SettingsRepository } from '@certwright/core';
import type { Ctx } from '../context.js';

export function settingsRepository(ctx: Ctx): SettingsRepository {
  return {
    async get(name) {
      const row = await ctx.db
        .selectFrom('system_settings')
        .select('value')
        .where('name', '=', name)
        .executeTakeFirst();
      return row ? row.value : null;
    },
    async put(name, value) {
      const updated_at = ctx.clock.now();
      // Update first, insert when nothing was there: the same statements on both SQL families.
      // Two first writes racing: one loses to the primary key (`conflict`) and may be repeated.
      const result = await ctx.db
        .updateTable('system_settings')
        .set({ value, updated_at })
        .where('name', '=', name)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) > 0) return;
      await ctx.db.insertInto('system_settings').values({ name, value, updated_at }).execute();
    },
  };
}
