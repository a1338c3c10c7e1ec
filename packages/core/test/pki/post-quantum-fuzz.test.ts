import fc from 'fast-check';
import { describe, it } from 'vitest';
import { typedOnly } from '../../src/testing/fuzz.js';
import { postQuantumTargets } from './fuzz/post-quantum-targets.js';
import { postQuantumSkip, printPostQuantumSkip } from './post-quantum-support.js';

/**
 * The short form of the post-quantum fuzz campaign (`pnpm bench fuzz` runs ≥ 100,000 cases per
 * target): ML-DSA and SLH-DSA SPKIs, PKCS#8 keys, signatures and CSRs, mutated from committed
 * seeds, throw nothing but CertwrightErrors. Seeded, so a failure replays. The key readers run
 * on every runtime; where node:crypto lacks the algorithms every key import is refused with
 * `runtime_unsupported`, so the signature target, which needs verification, is skipped there.
 */
printPostQuantumSkip('post-quantum-fuzz.test.ts');

const CASES = 400;

describe('post-quantum parsers throw only typed errors', () => {
  postQuantumTargets().forEach((target, i) => {
    const skip = target.name === 'pq-signature' && postQuantumSkip !== undefined;
    it.skipIf(skip)(`${target.name}: ${target.covers}`, { timeout: 180_000 }, () => {
      fc.assert(typedOnly(target), { seed: 0x9c0de + i, numRuns: CASES });
    });
  });
});
