import { randomBytes } from 'node:crypto';
import { CertwrightError, isCertwrightError, type SecretBox } from '@certwright/core';
import {
  KEY_CHECK_CONTEXT,
  KEY_CHECK_ID,
  KEY_ROW_PREFIX,
  keyRowContext,
  type SqlStorage,
} from '@certwright/storage-sql';
import type { EncryptionKey } from './encryption-key.js';

/**
 * Proves at start-up that this server's keyring opens the database's secrets. The first start
 * seals a random value into `cw_key_check`; every later start must open it with a key of the ring.
 * A database from before the check existed is probed through the secrets it already holds (issuer
 * and target configs) before the row is written, so a wrong key never becomes the recorded one.
 *
 * Besides, one row per key that may have sealed something (`key:<key id>`): this start records its
 * current key, and the key that opened the first row, before anything is sealed; a re-seal that
 * finished removes the rows of the keys it replaced (docs/operations/key-rotation.md). A start
 * whose ring lacks a recorded key is refused naming the key id, so a rotation cannot lose the
 * secrets still sealed under the old key by starting without it too early.
 * Refuses with `config_invalid` naming SVC_ENCRYPTION_KEY or SVC_ENCRYPTION_KEY_PREVIOUS.
 */
export async function verifyEncryptionKey(
  storage: SqlStorage,
  box: SecretBox,
  key: Pick<EncryptionKey, 'origin' | 'path'>,
): Promise<void> {
  const readRows = () => storage.db.selectFrom('cw_key_check').select(['id', 'sealed']).execute();
  let rows = await readRows();
  if (!rows.some((r) => r.id === KEY_CHECK_ID)) {
    await probeSealedRecords(storage, box, key);
    try {
      await storage.db
        .insertInto('cw_key_check')
        .values({
          id: KEY_CHECK_ID,
          sealed: await box.seal(randomBytes(32), KEY_CHECK_CONTEXT),
          created_at: new Date(),
        })
        .execute();
    } catch (error) {
      // Another instance wrote it first: check ours against theirs.
      if (!isCertwrightError(error) || error.code !== 'conflict') throw error;
    }
    rows = await readRows();
  }
  const first = rows.find((r) => r.id === KEY_CHECK_ID);
  if (!first) throw new CertwrightError('internal', 'the key-check row is missing after it was written');
  const recorded = rows.filter((r) => r.id.startsWith(KEY_ROW_PREFIX));
  const missing: string[] = [];
  for (const row of recorded) {
    const keyId = row.id.slice(KEY_ROW_PREFIX.length);
    const opens =
      box.hasKey(keyId) &&
      (await box.openBytes(row.sealed, keyRowContext(keyId)).then(
        () => true,
        () => false,
      ));
    if (!opens) missing.push(keyId);
  }
  const opener = await box.openingKeyId(first.sealed, KEY_CHECK_CONTEXT).catch(() => null);
  if (opener === null) throw mismatch(box, key, missing);
  if (missing.length > 0) throw missingKey(missing, box);
  const known = new Set(recorded.map((r) => r.id.slice(KEY_ROW_PREFIX.length)));
  for (const keyId of new Set([opener, box.keyId])) {
    if (known.has(keyId)) continue;
    try {
      await storage.db
        .insertInto('cw_key_check')
        .values({
          id: `${KEY_ROW_PREFIX}${keyId}`,
          sealed: await box.sealUnderKey(keyId, randomBytes(32), keyRowContext(keyId)),
          created_at: new Date(),
        })
        .execute();
    } catch (error) {
      // Another instance recorded the same key at the same time.
      if (!isCertwrightError(error) || error.code !== 'conflict') throw error;
    }
  }
}

async function probeSealedRecords(
  storage: SqlStorage,
  box: SecretBox,
  key: Pick<EncryptionKey, 'origin' | 'path'>,
) {
  const issuer = await storage.db.selectFrom('issuers').select('id').limit(1).executeTakeFirst();
  const target = await storage.db.selectFrom('deployment_targets').select('id').limit(1).executeTakeFirst();
  try {
    if (issuer) await storage.issuers.getWithConfig(issuer.id);
    if (target) await storage.targets.getWithConfig(target.id);
  } catch (error) {
    if (isCertwrightError(error) && error.code === 'internal') throw mismatch(box, key, []);
    throw error;
  }
}

function mismatch(
  box: SecretBox,
  key: Pick<EncryptionKey, 'origin' | 'path'>,
  missing: string[],
): CertwrightError {
  const hint =
    missing.length > 0
      ? ` The database holds secrets sealed under key ${missing.join(', ')}: during a key rotation, keep the old key ` +
        'in SVC_ENCRYPTION_KEY_PREVIOUS until `certwright-server rekey` has finished (docs/operations/key-rotation.md).'
      : '';
  if (box.previousKeyIds.length > 0) {
    return new CertwrightError(
      'config_invalid',
      'neither SVC_ENCRYPTION_KEY nor a key of SVC_ENCRYPTION_KEY_PREVIOUS opens the secrets in this database: ' +
        `they were sealed under another key.${hint}`,
    );
  }
  const message =
    key.origin === 'configured'
      ? 'SVC_ENCRYPTION_KEY does not open the secrets in this database: they were sealed under another key. ' +
        'Set SVC_ENCRYPTION_KEY to the key the database was created with.'
      : `the database holds secrets sealed under another key than the one this server generated in ${key.path}. ` +
        'Set SVC_ENCRYPTION_KEY to the key the database was created with (every instance sharing a database needs the same key).';
  return new CertwrightError('config_invalid', `${message}${hint}`);
}

function missingKey(keyIds: string[], box: SecretBox): CertwrightError {
  return new CertwrightError(
    'config_invalid',
    `the database holds secrets sealed under key ${keyIds.join(', ')}, which is neither SVC_ENCRYPTION_KEY (key ${box.keyId}) ` +
      `nor in SVC_ENCRYPTION_KEY_PREVIOUS${box.previousKeyIds.length > 0 ? ` (${box.previousKeyIds.join(', ')})` : ''}. ` +
      'Add that key to SVC_ENCRYPTION_KEY_PREVIOUS until `certwright-server rekey` has finished (docs/operations/key-rotation.md).',
  );
}
