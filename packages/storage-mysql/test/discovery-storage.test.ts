import { SecretBox } from '@certwright/core';
import { describeDiscoveryStorageContract } from '@certwright/core/testing';
import { createMysqlStorage } from '../src/index.js';
import { createTempDatabase, mysqlSkipReason } from './helpers.js';

const secretBox = new SecretBox(SecretBox.generateKey());
const skip = await mysqlSkipReason();

describeDiscoveryStorageContract(
  'MySQL/MariaDB',
  async () => {
    const temp = await createTempDatabase();
    const storage = createMysqlStorage(temp.url, { secretBox, maxConnections: 12 });
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
  { skip },
);
