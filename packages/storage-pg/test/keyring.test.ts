import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecretBox } from '@certwright/core';
import { describeKeyringRotation } from '../../storage-sql/test/keyring-suite.js';
import { createPgliteStorage, createPostgresStorage } from '../src/index.js';
import { copyMigratedPgliteDataDir } from '../src/testing.js';
import { createTempDatabase, postgresSkipReason } from './helpers.js';

describeKeyringRotation('PGlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cw-keyring-'));
  const dataDir = join(dir, 'pglite');
  const { key } = await copyMigratedPgliteDataDir(dataDir);
  return {
    key,
    async open(box: SecretBox) {
      const storage = await createPgliteStorage({ dataDir }, { secretBox: box });
      await storage.migrate();
      return storage;
    },
    async dispose() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describeKeyringRotation('PostgreSQL', async () => {
  const skip = await postgresSkipReason();
  if (skip) return skip;
  const database = await createTempDatabase();
  return {
    key: SecretBox.generateKey(),
    async open(box: SecretBox) {
      const storage = createPostgresStorage(database.url, { secretBox: box });
      await storage.migrate();
      return storage;
    },
    dispose: () => database.drop(),
  };
});
