import { SecretBox } from '@certwright/core';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createPgliteStorage } from '../src/index.js';

describe('upgrading profiles to allow_ip_sans (PGlite)', { timeout: 120_000 }, () => {
  it('keeps allowing IP addresses on profiles stored before migration 7, while new profiles default to false', async () => {
    const storage = await createPgliteStorage(
      { memory: true },
      { secretBox: new SecretBox(SecretBox.generateKey()) },
    );
    try {
      await storage.migrate();
      const old = await storage.profiles.create({ name: 'made before', max_validity_days: 90 });
      // The schema as it was before migration 7.
      await sql`alter table certificate_profiles drop column allow_ip_sans`.execute(storage.db);
      await storage.db.deleteFrom('cw_schema_migrations').where('version', '=', 7).execute();

      expect((await storage.migrate()).applied).toEqual([7]);
      expect((await storage.profiles.require(old.id)).allow_ip_sans).toBe(true);
      expect((await storage.profiles.require('prof-default')).allow_ip_sans).toBe(true);
      const fresh = await storage.profiles.create({ name: 'made after', max_validity_days: 90 });
      expect(fresh.allow_ip_sans).toBe(false);
      expect((await storage.migrate()).applied).toEqual([]);
    } finally {
      await storage.close();
    }
  });
});
