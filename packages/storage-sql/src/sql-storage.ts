import { type Clock, type SecretBox, type Storage, systemClock } from '@certwright/core';
import { type Kysely, sql } from 'kysely';
import type { Ctx } from './context.js';
import { DeferredInserts } from './deferred-inserts.js';
import { prepareKeyring } from './keyring.js';
import { inventory } from './migrations/0001_inventory.js';
import { auditChain } from './migrations/0006_audit_chain.js';
import { keyring } from './migrations/0034_keyring.js';
import { appliedMigrations, type MigrateResult, migrate } from './migrations/index.js';
import { type RekeyOptions, type RekeyResult, runRekey } from './rekey.js';
import { sealAuditHead } from './repos/audit.js';
import { sealWebhookUrls } from './repos/webhooks.js';
import { allRepositories } from './repositories.js';
import type { Database, Flavor } from './schema.js';
import { seedBaseline } from './seed.js';
import { transactionStorage } from './tx-storage.js';

export interface SqlStorageOptions {
  /** A Kysely instance whose dialect is wrapped with `withErrorTranslation`. */
  db: Kysely<Database>;
  flavor: Flavor;
  engine: Storage['engine'];
  /** Seals issuer/target config, webhook headers and private keys at rest. */
  secretBox: SecretBox;
  clock?: Clock;
}

/** A Storage plus the lifecycle operations only the process that owns the pool performs. */
export interface SqlStorage extends Storage {
  /** Applies pending migrations and the baseline seed under the cross-instance lock. */
  migrate(): Promise<MigrateResult>;
  appliedMigrations(): Promise<number[]>;
  /** The underlying Kysely instance (the SQL queue and benchmarks share it). */
  readonly db: Kysely<Database>;
  readonly flavor: Flavor;
  /** Re-seals every sealed value under the current key of the storage's keyring (rekey.ts). */
  rekey(options?: RekeyOptions): Promise<RekeyResult>;
  /** The ids of the storage's keyring: the current key and the previous ones. */
  readonly keyring: { readonly keyId: string; readonly previousKeyIds: readonly string[] };
  /** Closes the pool (or the embedded database). */
  close(): Promise<void>;
}

/** The storage outside transactions; `transaction` hands its body a transaction's storage (tx-storage.ts). */
function build(ctx: Ctx, engine: Storage['engine']): Storage {
  return {
    engine,
    ...allRepositories(ctx),
    transaction: async (fn) => {
      const committed: (() => unknown)[] = [];
      const result = await ctx.db.transaction().execute(async (trx) => {
        const deferred = new DeferredInserts(trx, ctx.flavor);
        const beforeCommit: (() => Promise<void>)[] = [];
        const tx = transactionStorage(
          { ...ctx, db: trx, inTx: true, afterCommit: committed, beforeCommit, deferred },
          engine,
          deferred,
        );
        const out = await fn(tx);
        // The audit events take the new certificates into their statement where they can
        // (repos/audit.ts); whatever still waits is written last.
        for (const write of beforeCommit) await write();
        await deferred.flush();
        return out;
      });
      runCallbacks(committed);
      return result;
    },
    afterCommit: (callback) => runCallbacks([callback]),
    ping: async () => {
      await sql`select 1`.execute(ctx.db);
    },
  };
}

/** Runs post-commit callbacks in order; their failures are theirs to handle (see the port). */
function runCallbacks(callbacks: readonly (() => unknown)[]): void {
  for (const callback of callbacks) {
    try {
      Promise.resolve(callback()).catch(() => {});
    } catch {
      // ignored: see Storage.afterCommit
    }
  }
}

export function createSqlStorage(options: SqlStorageOptions): SqlStorage {
  const clock = options.clock ?? systemClock;
  const ctx: Ctx = {
    db: options.db,
    flavor: options.flavor,
    box: options.secretBox,
    chainKey: {},
    clock,
    inTx: false,
    ...(options.flavor === 'postgres' ? { auditHead: { last: null } } : {}),
  };
  const storage = build(ctx, options.engine);
  return {
    ...storage,
    db: options.db,
    flavor: options.flavor,
    migrate: () =>
      migrate(options.db, options.flavor, async (db, applied) => {
        await prepareKeyring(db, options.flavor, options.secretBox, {
          appliedKeyring: applied.includes(keyring.version),
          fresh: applied.includes(inventory.version),
        });
        if (applied.includes(auditChain.version)) await sealAuditHead(db, options.secretBox);
        await sealWebhookUrls(db, options.secretBox);
        await seedBaseline(db, clock.now(), options.secretBox);
      }),
    appliedMigrations: () => appliedMigrations(options.db),
    rekey: (rekeyOptions) =>
      runRekey({ db: options.db, flavor: options.flavor, box: options.secretBox, storage }, rekeyOptions),
    keyring: {
      keyId: options.secretBox.keyId,
      previousKeyIds: options.secretBox.previousKeyIds,
    },
    close: () => options.db.destroy(),
  };
}
