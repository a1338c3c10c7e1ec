/**
 * The agent reports AGENT_VERSION to the server and prints it for `--version`; `changeset
 * version` bumps package.json only, so this pins the two together.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AGENT_VERSION } from '../src/index.js';

describe('AGENT_VERSION', () => {
  it('is the version in package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(AGENT_VERSION).toBe(pkg.version);
  });
});
