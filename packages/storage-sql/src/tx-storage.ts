import type { Storage } from '@certwright/core';
import { sql } from 'kysely';
import type { Ctx } from './context.js';
import type { DeferredInserts } from './deferred-inserts.js';
import { REPOSITORY_GROUPS, repositoryGroupKeys } from './repositories.js';

/**
 * Calls that may run while new certificates wait in `deferred`: the deferring call itself, the
 * audit append, which writes nothing that reads or refers to a certificate row, and an ACME
 * order's claim, which writes what waits itself, in the statement of its update (repos/acme.ts).
 */
const DEFERRABLE: Readonly<Record<string, ReadonlySet<string>>> = {
  versions: new Set(['createWithCertificate']),
  audit: new Set(['append']),
  acmeOrders: new Set(['markIssued']),
};

/**
 * The storage a body of `Storage.transaction` works with. Its repositories are built for the
 * transaction's context when the body first uses them, not all of them for every transaction:
 * an enrollment's transaction uses four of the 33, and building and wrapping every one cost
 * ≈100 µs of Node CPU per transaction (docs/api/lifecycle.md, "Issuance pipeline").
 *
 * Each repository method writes what waits in `deferred` before it runs (deferred-inserts.ts):
 * every other call sees the new certificates as if they had been written at once. When nothing
 * waits, a method is called as it is. A transaction opened on it joins this one.
 */
export function transactionStorage(ctx: Ctx, engine: Storage['engine'], deferred: DeferredInserts): Storage {
  prepareGetters();
  return new TxStorage(ctx, engine, deferred) as unknown as Storage;
}

class TxStorage {
  readonly engine: Storage['engine'];
  readonly transaction: Storage['transaction'];
  readonly afterCommit: Storage['afterCommit'];
  readonly ping: Storage['ping'];
  /** The groups (repositories.ts) built so far, by index. */
  readonly groups: (Record<string, object> | undefined)[] = [];

  constructor(
    readonly ctx: Ctx,
    engine: Storage['engine'],
    readonly deferred: DeferredInserts,
  ) {
    this.engine = engine;
    this.transaction = (fn) => fn(this as unknown as Storage);
    this.afterCommit = (callback) => {
      ctx.afterCommit!.push(callback);
    };
    this.ping = async () => {
      await sql`select 1`.execute(ctx.db);
    };
  }
}

let gettersReady = false;

/** One getter per repository on the prototype, replaced on first use by the built repository. */
function prepareGetters(): void {
  if (gettersReady) return;
  const keys = repositoryGroupKeys();
  keys.forEach((names, index) => {
    for (const name of names) {
      Object.defineProperty(TxStorage.prototype, name, {
        configurable: true,
        enumerable: true,
        get(this: TxStorage) {
          let group = this.groups[index];
          if (!group) {
            group = REPOSITORY_GROUPS[index]!(this.ctx) as Record<string, object>;
            this.groups[index] = group;
          }
          const repository = writingDeferredFirst(name, group[name]!, this.deferred);
          // Writable and configurable like an ordinary property: a wrapper (a Proxy over the
          // transaction's storage) may hand out its own object for it.
          Object.defineProperty(this, name, {
            value: repository,
            enumerable: true,
            writable: true,
            configurable: true,
          });
          return repository;
        },
      });
    }
  });
  gettersReady = true;
}

function writingDeferredFirst(name: string, repository: object, deferred: DeferredInserts): object {
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
  return methods;
}
