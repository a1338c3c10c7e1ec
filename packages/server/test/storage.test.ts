import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecretBox, silentLogger } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.js';
import { openStorage } from '../src/storage.js';

describe('openStorage', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cw-server-storage-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('opens embedded PGlite when SVC_DATABASE_URL is unset and keeps data across a restart', async () => {
    const config = parseConfig({
      SVC_AUTH_TYPE: 'none',
      SVC_DATA_DIR: dir,
      SVC_TLS_CERT_PATH: '/x',
      SVC_TLS_KEY_PATH: '/y',
    });
    const key = { key: SecretBox.generateKey(), origin: 'configured' } as const;
    const first = await openStorage(config, silentLogger, key);
    expect(first.storage.engine).toBe('pglite');
    expect(await first.check()).toEqual({ ok: true });
    const owner = await first.storage.owners.create({ name: 'kept' });
    await first.close();

    const second = await openStorage(config, silentLogger, key);
    expect((await second.storage.owners.require(owner.id)).name).toBe('kept');
    expect(await second.storage.agents.get('server-scanner')).not.toBeNull();
    await second.close();
  });
});
