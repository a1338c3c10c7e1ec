/**
 * The client's version constant goes into every User-Agent (and the CLI's and MCP server's
 * `--version`); `changeset version` bumps package.json only, so this pins the two together.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLIENT_VERSION } from '../src/index.js';

describe('CLIENT_VERSION', () => {
  it('is the version in package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(CLIENT_VERSION).toBe(pkg.version);
  });
});
