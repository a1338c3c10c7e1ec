import { expect } from 'vitest';
import { isCertwrightError } from '../errors.js';
import type { Storage } from '../ports/storage.js';
import type { TcpRelay } from './tcp-relay.js';

/**
 * The outage a networked storage must ride out, whatever the engine: with `relay` (the only
 * way `storage` reaches its server) cut, a query fails `unavailable` rather than hanging or
 * surfacing a driver error, and once the relay is back the storage serves again without a
 * restart and with its data intact. `whileDown` adds engine-specific checks during the outage.
 * Leaves the relay running; the caller closes the storage and stops the relay.
 */
export async function expectUnavailableThenRecovered(
  storage: Storage,
  relay: TcpRelay,
  whileDown?: () => Promise<void>,
): Promise<void> {
  await storage.owners.create({ name: 'before' });

  await relay.stop();
  const error = await storage.owners.list().catch((e: unknown) => e);
  expect(isCertwrightError(error) && error.code).toBe('unavailable');
  await whileDown?.();

  await relay.start();
  // The pool may still hold a socket that died with the relay; the first query can discover
  // that. Within a few attempts a fresh connection must serve it.
  let recovered = false;
  for (let i = 0; i < 5 && !recovered; i++) {
    recovered = await storage.owners.list().then(
      () => true,
      () => false,
    );
  }
  expect(recovered).toBe(true);
  expect((await storage.owners.list({ search: 'before' })).total).toBe(1);
}
