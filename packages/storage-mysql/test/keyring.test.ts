import { SecretBox } from '@certwright/core';
import { describeKeyringRotation } from '../../storage-sql/test/keyring-suite.js';
import { createMysqlStorage } from '../src/index.js';
import { createTempDatabase, mysqlSkipReason } from './helpers.js';

describeKeyringRotation('MariaDB', async () => {
  const skip = await mysqlSkipReason();
  if (skip) return skip;
  const database = await createTempDatabase();
  return {
    key: SecretBox.generateKey(),
    async open(box: SecretBox) {
      const storage = createMysqlStorage(database.url, { secretBox: box });
      await storage.migrate();
      return storage;
    },
    dispose: () => database.drop(),
  };
});
