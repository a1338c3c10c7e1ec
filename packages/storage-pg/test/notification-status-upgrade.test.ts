import { SecretBox } from '@certwright/core';
import { describe, expect, it } from 'vitest';
import { createMigratedPgliteStorage } from '../src/testing.js';

describe('upgrading notifications resolved "as sent without delivery" (PGlite)', { timeout: 120_000 }, () => {
  it('moves them to undeliverable and leaves delivered ones sent', async () => {
    const storage = await createMigratedPgliteStorage({ secretBox: new SecretBox(SecretBox.generateKey()) });
    try {
      const base = {
        type: 'Revocation' as const,
        recipient: 'ops@example.test',
        subject: 's',
        message: 'm',
        certificate_id: null,
        status: 'sent' as const,
        sent_at: new Date(),
      };
      // What earlier releases wrote.
      const noChannel = await storage.notifications.create({
        ...base,
        channel: 'email',
        last_error: "channel 'email' does not exist; resolved as sent without delivery",
      });
      const deleted = await storage.notifications.create({
        ...base,
        channel: 'webhook:wh-gone',
        last_error: "webhook 'wh-gone' does not exist (deleted); resolved as sent without delivery",
      });
      const disabled = await storage.notifications.create({
        ...base,
        channel: 'webhook:wh-off',
        last_error: "webhook 'ops' is disabled; not delivered",
      });
      const delivered = await storage.notifications.create({ ...base, channel: 'email' });
      await storage.db.deleteFrom('cw_schema_migrations').where('version', '=', 29).execute();

      expect((await storage.migrate()).applied).toEqual([29]);
      for (const event of [noChannel, deleted, disabled]) {
        expect(await storage.notifications.require(event.id)).toMatchObject({
          status: 'undeliverable',
          sent_at: null,
          last_error: event.last_error,
        });
      }
      expect((await storage.notifications.require(delivered.id)).status).toBe('sent');
      expect((await storage.notifications.countByStatus()).undeliverable).toBe(3);
    } finally {
      await storage.close();
    }
  });
});
