import fc from 'fast-check';
import { describe, it } from 'vitest';
import { typedOnly } from '../../src/testing/fuzz.js';
import { pkiTargets } from './fuzz/targets.js';

/**
 * The short form of the parser fuzz campaign (the long one is `pnpm bench fuzz`, ≥ 100,000
 * cases per target): every parser of outside input, fed mutated real seeds and random DER, throws
 * nothing but CertwrightErrors. Seeded, so a failure replays; fast-check shrinks it first.
 */
const CASES = 400;

describe('pki parsers throw only typed errors', () => {
  pkiTargets().forEach((target, i) => {
    it(`${target.name}: ${target.covers}`, { timeout: 120_000 }, () => {
      fc.assert(typedOnly(target), { seed: 0xf0220 + i, numRuns: CASES });
    });
  });
});
