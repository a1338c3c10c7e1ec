import { SecretBox } from '@certwright/core';
import { describeDiscoveryStorageContract } from '@certwright/core/testing';
import { createPgliteStorage, createPostgresStorage } from '../src/index.js';
import { createMigratedPgliteStorage } from '../src/testing.js';
import { createTempDatabase, postgresSkipReason } from './helpers.js';

const secretBox = new SecretBox(SecretBox.generateKey());
const pgSkip = await postgresSkipReason();

describeDiscoveryStorageContract('PGlite (memory)', async () => {
  const storage = await createMigratedPgliteStorage({ secretBox });
  return {
    storage,
    migrate: () => storage.migrate(),
    appliedMigrations: () => storage.appliedMigrations(),
    close: () => storage.close(),
  };
});

describeDiscoveryStorageContract(
  'PostgreSQL',
  async () => {
    const temp = await createTempDatabase();
    const storage = createPostgresStorage(temp.url, { secretBox, maxConnections: 12 });
    await storage.migrate();
    return {
      storage,
      migrate: () => storage.migrate(),
      appliedMigrations: () => storage.appliedMigrations(),
      close: async () => {
        await storage.close();
        await temp.drop();
      },
    };
  },
  { skip: pgSkip },
);
