import { randomUUID } from 'node:crypto';
import { createServices, SecretBox, type Services, silentLogger, systemClock } from '@certwright/core';
import { connectRedis, type RedisClient, RedisEphemeralStore } from '@certwright/queue-redis';
import { createPgliteStorage } from '@certwright/storage-pg';
import { createMigratedPgliteStorage } from '@certwright/storage-pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisSkipReason } from './support/redis.js';

const skip = await redisSkipReason();
const PASSWORD = 'a long and careful break-glass password';

/**
 * Two instances on one database and one Redis: a lockout earned on one holds on the other (the
 * count and the lockout are on the credential's row; Redis carries the rest of the shared state).
 */
describe.skipIf(skip !== undefined)('break-glass lockout across instances through Redis', () => {
  const prefix = `cw-test-bg-${randomUUID().slice(0, 8)}:`;
  let clients: RedisClient[] = [];
  let instances: Services[] = [];
  let close: () => Promise<void>;

  beforeAll(async () => {
    const storage = await createMigratedPgliteStorage({ secretBox: new SecretBox(SecretBox.generateKey()) });
    clients = await Promise.all([0, 1].map(() => connectRedis({ url: 'redis://127.0.0.1:6379' })));
    instances = clients.map((client) =>
      createServices(
        {
          storage,
          clock: systemClock,
          logger: silentLogger,
          ephemeral: new RedisEphemeralStore(client, { prefix }),
        },
        { breakglass: { enabled: true, lockoutThreshold: 2, lockoutMs: 60_000 } },
      ),
    );
    close = async () => {
      for (const key of await clients[0]!.keys(`${prefix}*`)) await clients[0]!.del(key);
      await Promise.all(clients.map((c) => c.quit()));
      await storage.close();
    };
  }, 120_000);
  afterAll(() => close?.());

  it('locks on one instance after failures spread over both, and unlocks from either', async () => {
    const [a, b] = instances as [Services, Services];
    await a.breakglass.setPassword({ type: 'api_key', id: 'api-key' }, 'ops', PASSWORD);
    const where = { ip_address: '192.0.2.1', user_agent: 'ua' };
    expect(await a.breakglass.login('ops', 'wrong one, long enough', where)).toBeNull();
    expect(await b.breakglass.login('ops', 'wrong two, long enough', where)).toBeNull();
    expect(await a.breakglass.login('ops', PASSWORD, where)).toBeNull();
    expect(await b.breakglass.login('ops', PASSWORD, where)).toBeNull();
    expect((await a.breakglass.list())[0]?.locked).toBe(true);
    await b.breakglass.unlock({ type: 'api_key', id: 'api-key' }, 'ops');
    expect(await a.breakglass.login('ops', PASSWORD, where)).not.toBeNull();
  });
});
