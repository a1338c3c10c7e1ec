import { type Clock, type SecretBox, type Storage, systemClock } from '@certwright/core';
import { type Kysely, sql } from 'kysely';
import type { Ctx } from './context.js';
import { DeferredInserts } from './deferred-inserts.js';
import { auditChain } from './migrations/0006_audit_chain.js';
import { appliedMigrations, type MigrateResult, migrate } from './migrations/index.js';
import { acmeRepositories } from './repos/acme.js';
import { agentRepository, targetRepository } from './repos/agents.js';
import { auditRepository, sealAuditHead } from './repos/audit.js';
import { certificateRepository } from './repos/certificates.js';
import {
  discoveredCertificateRepository,
  discoveryScanRepository,
  scanTargetRepository,
} from './repos/discovery.js';
import { healthCheckRepository } from './repos/health-checks.js';
import { jobRepository } from './repos/jobs.js';
import { notificationRepository } from './repos/notifications.js';
import { peopleRepositories } from './repos/people.js';
import { policyRuleRepository, violationRepository } from './repos/policy.js';
import {
  issuerRepository,
  ownerRepository,
  profileRepository,
  renewalPolicyRepository,
  teamRepository,
} from './repos/reference.js';
import { scepRepositories } from './repos/scep.js';
import { scepProbeRepository } from './repos/scep-probes.js';
import { settingsRepository } from './repos/settings.js';
import { versionRepository } from './repos/versions.js';
import { webhookRepository } from './repos/webhooks.js';
import type { Database, Flavor } from './schema.js';
import { seedBaseline } from './seed.js';

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
  /** Closes the pool (or the embedded database). */
  close(): Promise<void>;
}

function build(ctx: Ctx, engine: Storage['engine']): Storage {
  const storage: Storage = {
    engine,
    certificates: certificateRepository(ctx),
    versions: versionRepository(ctx),
    issuers: issuerRepository(ctx),
    owners: ownerRepository(ctx),
    teams: teamRepository(ctx),
    profiles: profileRepository(ctx),
    renewalPolicies: renewalPolicyRepository(ctx),
    policyRules: policyRuleRepository(ctx),
    violations: violationRepository(ctx),
    agents: agentRepository(ctx),
    targets: targetRepository(ctx),
    jobs: jobRepository(ctx),
    notifications: notificationRepository(ctx),
    webhooks: webhookRepository(ctx),
    settings: settingsRepository(ctx),
    audit: auditRepository(ctx),
    scepProbes: scepProbeRepository(ctx),
    ...acmeRepositories(ctx),
    ...scepRepositories(ctx),
    scanTargets: scanTargetRepository(ctx),
    discoveryScans: discoveryScanRepository(ctx),
    discovered: discoveredCertificateRepository(ctx),
    healthChecks: healthCheckRepository(ctx),
    ...peopleRepositories(ctx),
    transaction: async (fn) => {
      if (ctx.inTx) return fn(storage);
      const committed: (() => unknown)[] = [];
      const result = await ctx.db.transaction().execute(async (trx) => {
        const deferred = new DeferredInserts(trx, ctx.flavor);
        // The new certificates first: what the other deferred writes (audit events) record.
        const beforeCommit: (() => Promise<void>)[] = [() => deferred.flush()];
        const tx = build(
          { ...ctx, db: trx, inTx: true, afterCommit: committed, beforeCommit, deferred },
          engine,
        );
        const out = await fn(writingDeferredFirst(tx, deferred));
        for (const write of beforeCommit) await write();
        return out;
      });
      runCallbacks(committed);
      return result;
    },
    afterCommit: (callback) => {
      if (ctx.afterCommit) ctx.afterCommit.push(callback);
      else runCallbacks([callback]);
    },
    ping: async () => {
      await sql`select 1`.execute(ctx.db);
    },
  };
  return storage;
}

/**
 * Calls that may run while new certificates wait in `deferred`: the deferring call itself, and
 * the audit append, which writes nothing that reads or refers to a certificate row.
 */
const DEFERRABLE: Readonly<Record<string, ReadonlySet<string>>> = {
  versions: new Set(['createWithCertificate']),
  audit: new Set(['append']),
};

/**
 * The transaction's storage, each repository method writing what waits in `deferred` before
 * it runs (deferred-inserts.ts): every other call sees the new certificates as if they had been
 * written at once. When nothing waits, a method is called as it is.
 */
function writingDeferredFirst(tx: Storage, deferred: DeferredInserts): Storage {
  const wrapped: Record<string, unknown> = { ...tx };
  for (const [name, repository] of Object.entries(tx)) {
    if (typeof repository !== 'object' || repository === null) continue;
    const exempt = DEFERRABLE[name];
    const methods: Record<string, unknown> = {};
    for (const [method, fn] of Object.entries(repository as Record<string, unknown>)) {
      if (typeof fn !== 'function' || exempt?.has(method)) {
        methods[method] = fn;
      } else if (fn.constructor.name === 'AsyncGeneratorFunction') {
        methods[method] = async function* (...args: unknown[]) {
          await deferred.flush();
          yield* fn.apply(repository, args) as AsyncIterable<unknown>;
        };
      } else {
        methods[method] = (...args: unknown[]) =>
          deferred.pending
            ? deferred.flush().then(() => fn.apply(repository, args))
            : fn.apply(repository, args);
      }
    }
    wrapped[name] = methods;
  }
  // A transaction opened on `tx` joins this one, through this same storage.
  wrapped.transaction = <T>(fn: (inner: Storage) => Promise<T>) => fn(wrapped as unknown as Storage);
  return wrapped as unknown as Storage;
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
  const ctx: Ctx = { db: options.db, flavor: options.flavor, box: options.secretBox, clock, inTx: false };
  return {
    ...build(ctx, options.engine),
    db: options.db,
    flavor: options.flavor,
    migrate: () =>
      migrate(options.db, options.flavor, async (db, applied) => {
        if (applied.includes(auditChain.version)) await sealAuditHead(db, options.secretBox);
        await seedBaseline(db, clock.now(), options.secretBox);
      }),
    appliedMigrations: () => appliedMigrations(options.db),
    close: () => options.db.destroy(),
  };
}
