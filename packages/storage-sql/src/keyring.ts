import { AuditChainKey, type SecretBox } from '@certwright/core';
import type { Kysely } from 'kysely';
import type { Database, Flavor } from './schema.js';

/**
 * The keyring's state in `cw_keyring` (migration 0034; docs/operations/key-rotation.md).
 *
 * The audit chain key: the chain's HMAC key was derived from the encryption key (HKDF, RFC 5869)
 * by every release before the keyring. Derived that way from whichever key is current, it would
 * change with a rotation and every event written before it would stop verifying. So the 32 bytes
 * are derived once — from the key the chain began with, which gives exactly the key earlier
 * releases used — and stored sealed; a rotation re-seals them like any other secret, and the
 * chain continues under the same key. The derived bytes are stored, never a sealing key: whoever
 * holds the new key can open the chain key, not the old encryption key.
 */
export const AUDIT_CHAIN_KEY_NAME = 'audit_chain_key';
export const AUDIT_CHAIN_KEY_CONTEXT = 'certwright:audit-chain-key';
/**
 * '2': instances seal in the `v2.<key id>.` format. Absent or '1': they seal in `v1.`, which
 * release 2.0.0 reads, so both can share the database during an upgrade; a rotation's re-seal
 * (the contract step) records '2'. A database this release created records '2' at once.
 */
export const SEALED_FORMAT_NAME = 'sealed_format';
/** The progress of a re-seal (rekey.ts), as JSON. */
export const REKEY_PROGRESS_NAME = 'rekey';

/** The key-check row every release writes (its id and context; server key-check). */
export const KEY_CHECK_ID = 'secret-box';
export const KEY_CHECK_CONTEXT = 'certwright:key-check';
/**
 * One key-check row per key that may have sealed something in the database, `key:<key id>`,
 * sealed under that key: a start whose keyring lacks one of them is refused, naming the key id.
 * A finished re-seal removes the rows of every key but the current one.
 */
export const KEY_ROW_PREFIX = 'key:';
export const keyRowContext = (keyId: string) => `certwright:key-check:${keyId}`;

export async function readKeyring(db: Kysely<Database>, name: string): Promise<string | undefined> {
  const row = await db.selectFrom('cw_keyring').select('value').where('name', '=', name).executeTakeFirst();
  return row?.value;
}

export async function writeKeyring(
  db: Kysely<Database>,
  flavor: Flavor,
  name: string,
  value: string,
): Promise<void> {
  const row = { name, value, updated_at: new Date() };
  const insert = db.insertInto('cw_keyring').values(row);
  if (flavor === 'mysql') await insert.onDuplicateKeyUpdate({ value, updated_at: row.updated_at }).execute();
  else
    await insert
      .onConflict((oc) => oc.column('name').doUpdateSet({ value, updated_at: row.updated_at }))
      .execute();
}

/**
 * After migrations, under the migration lock: records the sealed format on the start that applied
 * migration 0034 (`fresh`: that start created the database), stores the audit chain key when it
 * is missing, and switches `box` to the recorded format.
 */
export async function prepareKeyring(
  db: Kysely<Database>,
  flavor: Flavor,
  box: SecretBox,
  step: { appliedKeyring: boolean; fresh: boolean },
): Promise<void> {
  if (step.appliedKeyring) await writeKeyring(db, flavor, SEALED_FORMAT_NAME, step.fresh ? '2' : '1');
  await applySealedFormat(db, box);
  if ((await readKeyring(db, AUDIT_CHAIN_KEY_NAME)) !== undefined) return;
  const origin = await chainOrigin(db, box);
  // No key of the ring opens the database: the start is refused by the key check right after.
  if (origin === null) return;
  const bytes = await AuditChainKey.deriveBytes(box, origin);
  try {
    await writeKeyring(db, flavor, AUDIT_CHAIN_KEY_NAME, await box.seal(bytes, AUDIT_CHAIN_KEY_CONTEXT));
  } finally {
    bytes.fill(0);
  }
}

export async function applySealedFormat(db: Kysely<Database>, box: SecretBox): Promise<void> {
  if ((await readKeyring(db, SEALED_FORMAT_NAME)) === '2') box.sealWithKeyIds();
}

/**
 * The key the chain began with: the one that sealed the key-check row, which every release wrote
 * at its first start under the only key it had; the current key on a database without one.
 */
async function chainOrigin(db: Kysely<Database>, box: SecretBox): Promise<string | null> {
  const row = await db
    .selectFrom('cw_key_check')
    .select('sealed')
    .where('id', '=', KEY_CHECK_ID)
    .executeTakeFirst();
  if (!row) return box.keyId;
  return box.openingKeyId(row.sealed, KEY_CHECK_CONTEXT).catch(() => null);
}

/**
 * The chain key: the stored one, opened with the ring; derived from the current key (as every
 * release before the keyring did) on a database whose keyring holds none yet.
 */
export async function loadAuditChainKey(db: Kysely<Database>, box: SecretBox): Promise<AuditChainKey> {
  return (await loadChainKey(db, box)).key;
}

async function loadChainKey(
  db: Kysely<Database>,
  box: SecretBox,
): Promise<{ key: AuditChainKey; stored: boolean }> {
  const sealed = await readKeyring(db, AUDIT_CHAIN_KEY_NAME);
  if (sealed === undefined) return { key: AuditChainKey.of(box), stored: false };
  const bytes = await box.openBytes(sealed, AUDIT_CHAIN_KEY_CONTEXT);
  try {
    return { key: AuditChainKey.fromBytes(bytes), stored: true };
  } finally {
    bytes.fill(0);
  }
}

/** Where a storage keeps its chain key once loaded, shared by its transactions. */
export interface ChainKeyHolder {
  key?: Promise<AuditChainKey>;
}

/**
 * The chain key of a storage, loaded on first use and kept once it is the stored one (its bytes
 * never change; a rotation only re-seals them). A failed load, or a key derived because none is
 * stored yet, is looked up again next time.
 */
export function chainKeyOf(
  holder: ChainKeyHolder,
  db: Kysely<Database>,
  box: SecretBox,
): Promise<AuditChainKey> {
  if (holder.key) return holder.key;
  const loading = loadChainKey(db, box);
  const key = loading.then((loaded) => loaded.key);
  holder.key = key;
  loading.then(
    (loaded) => {
      if (!loaded.stored && holder.key === key) holder.key = undefined;
    },
    () => {
      if (holder.key === key) holder.key = undefined;
    },
  );
  return key;
}
