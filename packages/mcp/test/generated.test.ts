import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateOutputSchemas } from '../scripts/output-schemas.js';

describe('the generated output schemas', () => {
  it('match a fresh generation from the OpenAPI document (run `pnpm --filter @certwright/mcp generate`)', async () => {
    const fresh = await generateOutputSchemas();
    const stored = readFileSync(new URL('../src/generated/output-schemas.ts', import.meta.url), 'utf8');
    expect(stored, 'src/generated/output-schemas.ts is stale').toBe(fresh);
  });
});
