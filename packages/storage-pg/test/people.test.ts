import { SecretBox } from '@certwright/core';
import { describePeopleStorageContract } from '@certwright/core/testing';
import { createPgliteStorage, createPostgresStorage } from '../src/index.js';
import { createMigratedPgliteStorage } from '../src/testing.js';
import { createTempDatabase, postgresSkipReason } from './helpers.js';

const secretBox = new SecretBox(SecretBox.generateKey());

describePeopleStorageContract('PGlite (memory)', async () => {
  const storage = await createMigratedPgliteStorage({ secretBox });
  return { storage, close: () => storage.close() };
});

describePeopleStorageContract(
  'PostgreSQL',
  async () => {
    const temp = await createTempDatabase();
    const storage = createPostgresStorage(temp.url, { secretBox });
    await storage.migrate();
    return {
      storage,
      close: async () => {
        await storage.close();
        await temp.drop();
      },
    };
  },
  { skip: await postgresSkipReason() },
);
