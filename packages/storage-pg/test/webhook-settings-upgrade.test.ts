import { SecretBox } from '@certwright/core';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createPgliteStorage } from '../src/index.js';

describe('upgrading webhooks to notification types and per-kind options (PGlite)', {
  timeout: 120_000,
}, () => {
  it('keeps webhooks stored before migration 9 (every type, no options, headers intact) and adds settings', async () => {
    const storage = await createPgliteStorage(
      { memory: true },
      { secretBox: new SecretBox(SecretBox.generateKey()) },
    );
    try {
      await storage.migrate();
      const old = await storage.webhooks.create({
        name: 'made before',
        url: 'https://hooks.example.test/a',
        headers: { Authorization: 'Bearer kept' },
      });
      // The schema as it was before migration 9.
      await sql`alter table webhooks drop column events`.execute(storage.db);
      await sql`alter table webhooks drop column options`.execute(storage.db);
      await sql`drop table system_settings`.execute(storage.db);
      await storage.db.deleteFrom('cw_schema_migrations').where('version', '=', 9).execute();

      expect((await storage.migrate()).applied).toEqual([9]);
      expect(await storage.webhooks.require(old.id)).toMatchObject({ events: [], options: {} });
      expect((await storage.webhooks.getWithHeaders(old.id))?.headers).toEqual({
        Authorization: 'Bearer kept',
      });
      await storage.settings.put('webhooks.allowed_private_ranges', '10.0.0.0/8');
      expect(await storage.settings.get('webhooks.allowed_private_ranges')).toBe('10.0.0.0/8');
      expect((await storage.migrate()).applied).toEqual([]);
    } finally {
      await storage.close();
    }
  });

  it('seals the URLs of webhooks stored before migration 28 and keeps only their masked form in clear', async () => {
    const storage = await createPgliteStorage(
      { memory: true },
      { secretBox: new SecretBox(SecretBox.generateKey()) },
    );
    try {
      await storage.migrate();
      const token = 'xoxb-123456-SECRET-token';
      const old = await storage.webhooks.create({
        name: 'chat made before',
        url: `https://hooks.example.test/services/T0/B0/${token}?x=1`,
        service: 'slack',
      });
      const bare = await storage.webhooks.create({ name: 'bare', url: 'https://ntfy.example.test' });
      // The schema as it was before migration 28: the URL in clear.
      await sql`alter table webhooks drop column url_sealed`.execute(storage.db);
      await sql`update webhooks set url = ${`https://hooks.example.test/services/T0/B0/${token}?x=1`} where id = ${old.id}`.execute(
        storage.db,
      );
      await sql`update webhooks set url = 'https://ntfy.example.test' where id = ${bare.id}`.execute(
        storage.db,
      );
      await storage.db.deleteFrom('cw_schema_migrations').where('version', '=', 28).execute();

      expect((await storage.migrate()).applied).toEqual([28]);
      const rows = await sql<Record<string, unknown>>`select * from webhooks`.execute(storage.db);
      expect(JSON.stringify(rows.rows)).not.toContain(token);
      expect(await storage.webhooks.require(old.id)).toMatchObject({
        url_masked: 'https://hooks.example.test/********',
      });
      expect((await storage.webhooks.getWithHeaders(old.id))?.url).toBe(
        `https://hooks.example.test/services/T0/B0/${token}?x=1`,
      );
      expect((await storage.webhooks.getWithHeaders(bare.id))?.url).toBe('https://ntfy.example.test');
      expect((await storage.migrate()).applied).toEqual([]);
    } finally {
      await storage.close();
    }
  });
  it('takes a URL a 2.0.0 instance changed in clear during a rolling upgrade, and seals it at the next start', async () => {
    const storage = await createPgliteStorage(
      { memory: true },
      { secretBox: new SecretBox(SecretBox.generateKey()) },
    );
    try {
      await storage.migrate();
      const hook = await storage.webhooks.create({
        name: 'changed by 2.0.0',
        url: 'https://hooks.example.test/services/T0/B0/first-token',
        service: 'slack',
      });
      const bare = await storage.webhooks.create({ name: 'bare', url: 'https://ntfy.example.test/first' });
      // What 2.0.0 writes when its API changes a URL: the new one in `url`, in clear; it has
      // never heard of url_sealed, which keeps the old one.
      await sql`update webhooks set url = 'https://hooks.example.test/services/T0/B0/second-token' where id = ${hook.id}`.execute(
        storage.db,
      );
      await sql`update webhooks set url = 'https://ntfy.example.test' where id = ${bare.id}`.execute(
        storage.db,
      );

      // Deliveries by this release go to the newer URL; listings never show it in clear.
      expect((await storage.webhooks.getWithHeaders(hook.id))?.url).toBe(
        'https://hooks.example.test/services/T0/B0/second-token',
      );
      expect((await storage.webhooks.getWithHeaders(bare.id))?.url).toBe('https://ntfy.example.test');
      expect((await storage.webhooks.require(hook.id)).url_masked).toBe(
        'https://hooks.example.test/********',
      );

      // The next start seals them again; nothing is left in clear.
      await storage.migrate();
      const rows = await sql<{ url: string }>`select url from webhooks where id = ${hook.id}`.execute(
        storage.db,
      );
      expect(rows.rows[0]?.url).toBe('https://hooks.example.test/********');
      expect((await storage.webhooks.getWithHeaders(hook.id))?.url).toBe(
        'https://hooks.example.test/services/T0/B0/second-token',
      );
      expect((await storage.webhooks.getWithHeaders(bare.id))?.url).toBe('https://ntfy.example.test');
      // An unchanged row is left as it is.
      const before = await sql<{
        url_sealed: string;
      }>`select url_sealed from webhooks where id = ${hook.id}`.execute(storage.db);
      await storage.migrate();
      const after = await sql<{
        url_sealed: string;
      }>`select url_sealed from webhooks where id = ${hook.id}`.execute(storage.db);
      expect(after.rows[0]?.url_sealed).toBe(before.rows[0]?.url_sealed);
    } finally {
      await storage.close();
    }
  });
});
