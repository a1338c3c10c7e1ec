import { SecretBox } from '@certwright/core';
import { describeAcmeStorageContract } from '@certwright/core/testing';
import { createMysqlStorage } from '../src/index.js';
import { createTempDatabase, mysqlSkipReason } from './helpers.js';

const secretBox = new SecretBox(SecretBox.generateKey());

describeAcmeStorageContract(
  'MySQL/MariaDB',
  async () => {
    const temp = await createTempDatabase();
    const storage = createMysqlStorage(temp.url, { secretBox });
    await storage.migrate();
    return {
      storage,
      close: async () => {
        await storage.close();
        await temp.drop();
      },
    };
  },
  { skip: await mysqlSkipReason() },
);
