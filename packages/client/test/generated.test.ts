import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildDocument, generateAll } from '../scripts/openapi-source.js';
import { createClient } from '../src/index.js';

const dir = new URL('../src/generated/', import.meta.url);

describe('the generated client', () => {
  it('matches a fresh generation from the OpenAPI document (run `pnpm --filter @certwright/client generate`)', async () => {
    const fresh = await generateAll();
    for (const [name, text] of Object.entries(fresh)) {
      expect(readFileSync(new URL(name, dir), 'utf8'), `src/generated/${name} is stale`).toBe(text);
    }
  });

  it('has a method for every REST operation of the document', async () => {
    const document = await buildDocument();
    const ids = Object.values(document.paths).flatMap((item) =>
      Object.values(item).map((operation) => (operation as { operationId: string }).operationId),
    );
    expect(ids.length).toBeGreaterThan(50);
    const client = createClient({ baseUrl: 'https://127.0.0.1:1' });
    try {
      for (const id of ids)
        expect(typeof (client as unknown as Record<string, unknown>)[id], id).toBe('function');
    } finally {
      await client.close();
    }
  });
});
