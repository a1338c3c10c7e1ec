import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isCertwrightError, ManualClock, SecretBox } from '@certwright/core';
import {
  describeQueueContract,
  describeStorageContract,
  expectUnavailableThenRecovered,
  TcpRelay,
} from '@certwright/core/testing';
import { createSqlStorage, SqlQueue, type SqlStorage } from '@certwright/storage-sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgliteStorage, createPostgresStorage } from '../src/index.js';
import { createTempDatabase, postgresSkipReason } from './helpers.js';

const secretBox = new SecretBox(SecretBox.generateKey());
const pgSkip = await postgresSkipReason();

async function migrated(storage: SqlStorage) {
  await storage.migrate();
  return {
    storage,
    migrate: () => storage.migrate(),
    appliedMigrations: () => storage.appliedMigrations(),
  };
}

describeStorageContract('PGlite (memory)', async () => {
  const storage = await createPgliteStorage({ memory: true }, { secretBox });
  // PGlite serves one process: another storage over its connection stands for a second instance.
  const another = createSqlStorage({ db: storage.db, flavor: storage.flavor, engine: 'pglite', secretBox });
  return { ...(await migrated(storage)), another, close: () => storage.close() };
});

describeStorageContract(
  'PostgreSQL',
  async () => {
    const temp = await createTempDatabase();
    const storage = createPostgresStorage(temp.url, { secretBox, maxConnections: 24 });
    const another = createPostgresStorage(temp.url, { secretBox, maxConnections: 4 });
    return {
      ...(await migrated(storage)),
      another,
      close: async () => {
        await another.close();
        await storage.close();
        await temp.drop();
      },
    };
  },
  { skip: pgSkip },
);

describe('SQL queue on PGlite', () => {
  // One embedded database for the whole suite: every contract test uses its own topics.
  let storage: SqlStorage;
  const clock = new ManualClock(new Date());
  beforeAll(async () => {
    storage = await createPgliteStorage({ memory: true }, { secretBox, clock });
    await storage.migrate();
  });
  afterAll(async () => {
    await storage?.close();
  });
  describeQueueContract('PGlite', async () => ({
    queue: new SqlQueue(storage.db, { clock }),
    now: () => clock.now(),
    advance: async (ms) => clock.advance(ms),
  }));
});

describe.skipIf(pgSkip !== undefined)('SQL queue on PostgreSQL', () => {
  let temp: Awaited<ReturnType<typeof createTempDatabase>>;
  let storage: SqlStorage;
  const clock = new ManualClock(new Date());
  beforeAll(async () => {
    temp = await createTempDatabase();
    storage = createPostgresStorage(temp.url, { secretBox, clock, maxConnections: 24 });
    await storage.migrate();
  });
  afterAll(async () => {
    await storage?.close();
    await temp?.drop();
  });
  describeQueueContract('PostgreSQL', async () => ({
    queue: new SqlQueue(storage.db, { clock }),
    now: () => clock.now(),
    advance: async (ms) => clock.advance(ms),
  }));
});

describe('PGlite on disk', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cw-pglite-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps data and the schema across a reopen, and migrates nothing the second time', async () => {
    const first = await createPgliteStorage({ dataDir: dir }, { secretBox });
    expect((await first.migrate()).applied.length).toBeGreaterThan(0);
    const owner = await first.owners.create({ name: 'survivor' });
    const issuer = await first.issuers.create({ name: 'disk', type: 'Local', config: { k: 'v' } });
    await first.close();

    const second = await createPgliteStorage({ dataDir: dir }, { secretBox });
    expect((await second.migrate()).applied).toEqual([]);
    expect((await second.owners.require(owner.id)).name).toBe('survivor');
    expect((await second.issuers.getWithConfig(issuer.id))?.config).toEqual({ k: 'v' });
    await second.close();

    const wrongKey = await createPgliteStorage(
      { dataDir: dir },
      { secretBox: new SecretBox(SecretBox.generateKey()) },
    );
    await expect(wrongKey.issuers.getWithConfig(issuer.id)).rejects.toMatchObject({ code: 'internal' });
    await wrongKey.close();
  }, 120_000);
});

describe('PGlite in a directory that does not exist yet', () => {
  it('creates the data directory and its missing parents, so ./data/pglite works in an empty folder', async () => {
    const root = await mkdtemp(join(tmpdir(), 'cw-pglite-parents-'));
    try {
      const dataDir = join(root, 'data', 'nested', 'pglite');
      const storage = await createPgliteStorage({ dataDir }, { secretBox });
      await storage.ping();
      await storage.close();
      expect((await stat(join(dataDir, 'PG_VERSION'))).isFile()).toBe(true);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }, 120_000);
});

describe.skipIf(pgSkip !== undefined)('PostgreSQL connection loss', () => {
  it('fails with unavailable while the server is gone and recovers when it returns', async () => {
    const temp = await createTempDatabase();
    const relay = new TcpRelay('127.0.0.1', Number(new URL(temp.url).port || 5432));
    await relay.start();
    const url = new URL(temp.url);
    url.port = String(relay.port);
    const storage = createPostgresStorage(url.toString(), { secretBox, connectionTimeoutMs: 2000 });
    try {
      await storage.migrate();
      await expectUnavailableThenRecovered(storage, relay, async () => {
        const again = await storage.ping().catch((e: unknown) => e);
        expect(isCertwrightError(again) && again.code).toBe('unavailable');
      });
    } finally {
      await storage.close();
      await relay.stop();
      await temp.drop();
    }
  }, 60_000);
});
