import { isCertwrightError } from '@certwright/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readBackup } from '../src/backup/format.js';

async function* chunks(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

const header =
  '{"certwright_backup":1,"release":"t","created_at":"2026-01-01T00:00:00.000Z","engine":"pglite"}\n';
const part =
  '{"part":"owners","columns":[["id","text"],["n","int"],["at","ts"],["b","bytes"],["ok","bool"]]}\n';
const row = '["own-1",3,"2026-01-01T00:00:00.000Z","AAEC",true]\n';

/** Reading any bytes ends, and fails only with a typed `validation_failed` error. */
async function read(bytes: Uint8Array, size: number): Promise<'ok' | 'refused'> {
  try {
    for await (const _ of readBackup(chunks(bytes, size))) {
      // consumed
    }
    return 'ok';
  } catch (error) {
    if (!isCertwrightError(error) || error.code !== 'validation_failed') throw error;
    return 'refused';
  }
}

describe('the backup reader on hostile input', () => {
  it('refuses arbitrary bytes with a typed error only', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 2000 }),
        fc.integer({ min: 1, max: 64 }),
        async (bytes, size) => {
          expect(await read(bytes, size)).toBe('refused');
        },
      ),
      { seed: 4101, numRuns: 300 },
    );
  });

  it('refuses every mutation of a well-formed backup prefix with a typed error only', async () => {
    const text = `${header}${part}${row}`;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: text.length - 1 }),
        fc.string({ maxLength: 8 }),
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: 1, max: 40 }),
        async (at, insert, cut, size) => {
          const mutated = text.slice(0, at) + insert + text.slice(at + cut);
          // No end line and no manifest: never accepted, whatever the mutation.
          expect(await read(new TextEncoder().encode(mutated), size)).toBe('refused');
        },
      ),
      { seed: 4102, numRuns: 400 },
    );
  });

  it('refuses a line longer than the limit without holding it whole', async () => {
    async function* endless(): AsyncGenerator<Uint8Array> {
      yield new TextEncoder().encode(header);
      const filler = new Uint8Array(1024 * 1024).fill(0x61);
      for (let i = 0; i < 80; i += 1) yield filler;
    }
    await expect(
      (async () => {
        for await (const _ of readBackup(endless())) {
          // consumed
        }
      })(),
    ).rejects.toThrow(/a line is longer than/);
  });
});
