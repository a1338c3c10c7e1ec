import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { processKillingCsrs } from '../../src/testing/hostile-keys.js';

const CHILD = fileURLToPath(new URL('./support/parse-csr.ts', import.meta.url));

describe('a CSR never kills the process', () => {
  it('refuses the point-at-infinity and DSA y = -1 requests with key_rejected, and the process lives', () => {
    const csrs = processKillingCsrs();
    // Node aborts (SIGABRT, not an exception) when asked for these keys' details, so the parse
    // runs in a child process: without the key check it dies instead of answering.
    const child = spawnSync(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', CHILD, ...csrs.map((c) => c.der.toString('hex'))],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect({ signal: child.signal, status: child.status, stderr: child.stderr }).toEqual({
      signal: null,
      status: 0,
      stderr: '',
    });
    const outcomes = child.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(outcomes).toHaveLength(csrs.length);
    for (const outcome of outcomes)
      expect(outcome).toMatchObject({ outcome: 'refused', reason: 'key_rejected' });
    expect(outcomes[0].message).toMatch(/point at infinity/);
    expect(outcomes[1].message).toMatch(/DSA keys are not supported/);
  }, 60_000);
});
