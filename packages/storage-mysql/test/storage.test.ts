import { ManualClock, SecretBox } from '@certwright/core';
import {
  describeAuditHeadLoss,
  describeQueueContract,
  describeStorageContract,
  expectUnavailableThenRecovered,
  TcpRelay,
} from '@certwright/core/testing';
import { SqlQueue, type SqlStorage } from '@certwright/storage-sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMysqlStorage } from '../src/index.js';
import { createTempDatabase, mysqlSkipReason } from './helpers.js';

const secretBox = new SecretBox(SecretBox.generateKey());
const skip = await mysqlSkipReason();

describeStorageContract(
  'MySQL/MariaDB',
  async () => {
    const temp = await createTempDatabase();
    const storage = createMysqlStorage(temp.url, { secretBox, maxConnections: 24 });
    await storage.migrate();
    const another = createMysqlStorage(temp.url, { secretBox, maxConnections: 4 });
    return {
      storage,
      another,
      migrate: () => storage.migrate(),
      appliedMigrations: () => storage.appliedMigrations(),
      close: async () => {
        await another.close();
        await storage.close();
        await temp.drop();
      },
    };
  },
  { skip },
);

describe.skipIf(skip !== undefined)('SQL queue on MySQL/MariaDB', () => {
  let temp: Awaited<ReturnType<typeof createTempDatabase>>;
  let storage: SqlStorage;
  const clock = new ManualClock(new Date());
  beforeAll(async () => {
    temp = await createTempDatabase();
    storage = createMysqlStorage(temp.url, { secretBox, clock, maxConnections: 24 });
    await storage.migrate();
  });
  afterAll(async () => {
    await storage?.close();
    await temp?.drop();
  });
  describeQueueContract('MySQL/MariaDB', async () => ({
    queue: new SqlQueue(storage.db, { clock }),
    now: () => clock.now(),
    advance: async (ms) => clock.advance(ms),
  }));
});

describe.skipIf(skip !== undefined)('MySQL/MariaDB specifics', () => {
  it('compares names case-sensitively, like PostgreSQL, whatever the server collation', async () => {
    const temp = await createTempDatabase();
    const storage = createMysqlStorage(temp.url, { secretBox });
    try {
      await storage.migrate();
      await storage.teams.create({ name: 'Platform' });
      await storage.teams.create({ name: 'platform' });
      expect((await storage.teams.list({ search: 'PLATFORM' })).total).toBe(2);
    } finally {
      await storage.close();
      await temp.drop();
    }
  }, 60_000);

  it('fails with unavailable while the server is gone and recovers when it returns', async () => {
    const temp = await createTempDatabase();
    const relay = new TcpRelay('127.0.0.1', Number(new URL(temp.url).port || 3306));
    await relay.start();
    const url = new URL(temp.url);
    url.port = String(relay.port);
    const storage = createMysqlStorage(url.toString(), { secretBox, connectTimeoutMs: 2000 });
    try {
      await storage.migrate();
      await expectUnavailableThenRecovered(storage, relay);
    } finally {
      await storage.close();
      await relay.stop();
      await temp.drop();
    }
  }, 60_000);
});

describeAuditHeadLoss(
  'MySQL/MariaDB',
  async () => {
    const temp = await createTempDatabase();
    const storage = createMysqlStorage(temp.url, { secretBox, maxConnections: 4 });
    await storage.migrate();
    return {
      storage,
      deleteHead: async () => {
        await storage.db.deleteFrom('audit_head').execute();
      },
      close: async () => {
        await storage.close();
        await temp.drop();
      },
    };
  },
  { skip },
);
