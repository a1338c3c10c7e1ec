import { parseArgs } from 'node:util';
import {
  countRemaining,
  type RekeyProgress,
  readRekeyProgress,
  SEALED_TABLES,
} from '@certwright/storage-sql';
import { openStorage } from '../storage.js';
import { type CommandIo, commandConfig, commandLogger, messageOf } from './command.js';

export const REKEY_USAGE = `usage: certwright-server rekey [--batch-size N] [--status]

Re-seals every secret in the database under SVC_ENCRYPTION_KEY, opening what is sealed under the
keys of SVC_ENCRYPTION_KEY_PREVIOUS, in batches of N rows (default 500) of one transaction each.
Stopped anywhere, it resumes where it was. When it has finished, the previous keys are no longer
needed: remove SVC_ENCRYPTION_KEY_PREVIOUS (docs/operations/key-rotation.md). --status prints the
stored progress and changes nothing. The embedded database (no SVC_DATABASE_URL) can be re-sealed
only while no server runs on it; a running server re-seals it itself while previous keys are set.`;

/** `certwright-server rekey`: exit 0 when every secret is under the current key, 1 otherwise, 2 on usage. */
export async function runRekeyCommand(argv: readonly string[], io: CommandIo): Promise<number> {
  let values: { 'batch-size'?: string; status?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        'batch-size': { type: 'string' },
        status: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    io.err(`${messageOf(error)}\n${REKEY_USAGE}`);
    return 2;
  }
  if (values.help) {
    io.out(REKEY_USAGE);
    return 0;
  }
  const batchSize = values['batch-size'] === undefined ? 500 : Number(values['batch-size']);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 100_000) {
    io.err('--batch-size must be a whole number from 1 to 100000');
    return 2;
  }
  let opened: Awaited<ReturnType<typeof openStorage>>;
  try {
    const config = commandConfig(io);
    opened = await openStorage(config, commandLogger(config));
  } catch (error) {
    io.err(`certwright-server rekey: ${messageOf(error)}`);
    return 1;
  }
  const { storage } = opened;
  try {
    const { keyId, previousKeyIds } = storage.keyring;
    if (values.status) {
      const progress = await readRekeyProgress(storage.db);
      const remaining = await countRemaining(storage.db, keyId);
      io.out(
        JSON.stringify({
          key_id: keyId,
          previous_key_ids: previousKeyIds,
          remaining,
          progress: progress ?? null,
        }),
      );
      return remaining === 0 ? 0 : 1;
    }
    io.err(
      `re-sealing under key ${keyId}${previousKeyIds.length ? ` (previous: ${previousKeyIds.join(', ')})` : ''}`,
    );
    const result = await storage.rekey({
      batchSize,
      actor: 'rekey-command',
      onProgress: (p) => io.err(progressLine(p)),
    });
    for (const failure of result.progress.failures) {
      io.err(`not opened by any key of the ring: ${failure.table} ${failure.key} ${failure.column}`);
    }
    io.out(
      JSON.stringify({
        finished: result.finished,
        key_id: keyId,
        resealed: result.progress.resealed,
        total: result.progress.total,
        passes: result.progress.pass,
        failures: result.progress.failures,
        retired_key_ids: result.retiredKeyIds,
      }),
    );
    if (!result.finished) {
      io.err(
        result.progress.failures.length > 0
          ? 'not finished: the values above open under no key of the ring (add their key to SVC_ENCRYPTION_KEY_PREVIOUS, or remove them)'
          : 'not finished: values keep appearing under another key; does every instance have the new SVC_ENCRYPTION_KEY?',
      );
      return 1;
    }
    io.err(
      'finished: every secret is sealed under the current key; SVC_ENCRYPTION_KEY_PREVIOUS may be removed',
    );
    return 0;
  } catch (error) {
    io.err(`certwright-server rekey: ${messageOf(error)}`);
    return 1;
  } finally {
    await opened.close();
  }
}

export function progressLine(p: Readonly<RekeyProgress>): string {
  const table = SEALED_TABLES[p.table]?.table ?? 'final check';
  return `re-sealed ${p.resealed} of ${p.total} (pass ${p.pass}, at ${table})`;
}
