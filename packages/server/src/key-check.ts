import { randomBytes } from 'node:crypto';
import { CertwrightError, isCertwrightError, type SecretBox } from '@certwright/core';
import type { SqlStorage } from '@certwright/storage-sql';
import type { EncryptionKey } from './encryption-key.js';

const ROW_ID = 'secret-box';
const CONTEXT = 'certwright:key-check';

/**
 * Proves at start-up that this server's encryption key is the one the database's secrets are
 * sealed under. The first start seals a random value into `cw_key_check`; every later start
 * must open it. A database from before the check existed is probed through the secrets it
 * already holds (issuer and target configs) before the row is written, so a wrong key never
 * becomes the recorded one. Refuses with `config_invalid` naming SVC_ENCRYPTION_KEY.
 */
export async function verifyEncryptionKey(
  storage: SqlStorage,
  box: SecretBox,
  key: Pick<EncryptionKey, 'origin' | 'path'>,
): Promise<void> {
  const read = () =>
    storage.db.selectFrom('cw_key_check').select('sealed').where('id', '=', ROW_ID).executeTakeFirst();
  let row = await read();
  if (!row) {
    await probeSealedRecords(storage, key);
    try {
      await storage.db
        .insertInto('cw_key_check')
        .values({ id: ROW_ID, sealed: await box.seal(randomBytes(32), CONTEXT), created_at: new Date() })
        .execute();
      return;
    } catch (error) {
      // Another instance wrote it first: check ours against theirs.
      if (!isCertwrightError(error) || error.code !== 'conflict') throw error;
      row = await read();
      if (!row) throw error;
    }
  }
  try {
    await box.openBytes(row.sealed, CONTEXT);
  } catch {
    throw mismatch(key);
  }
}

async function probeSealedRecords(storage: SqlStorage, key: Pick<EncryptionKey, 'origin' | 'path'>) {
  const issuer = await storage.db.selectFrom('issuers').select('id').limit(1).executeTakeFirst();
  const target = await storage.db.selectFrom('deployment_targets').select('id').limit(1).executeTakeFirst();
  try {
    if (issuer) await storage.issuers.getWithConfig(issuer.id);
    if (target) await storage.targets.getWithConfig(target.id);
  } catch (error) {
    if (isCertwrightError(error) && error.code === 'internal') throw mismatch(key);
    throw error;
  }
}

function mismatch(key: Pick<EncryptionKey, 'origin' | 'path'>): CertwrightError {
  const message =
    key.origin === 'configured'
      ? 'SVC_ENCRYPTION_KEY does not open the secrets in this database: they were sealed under another key. ' +
        'Set SVC_ENCRYPTION_KEY to the key the database was created with.'
      : `the database holds secrets sealed under another key than the one this server generated in ${key.path}. ` +
        'Set SVC_ENCRYPTION_KEY to the key the database was created with (every instance sharing a database needs the same key).';
  return new CertwrightError('config_invalid', message);
}
