import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock, MemoryEphemeralStore, SecretBox, silentLogger } from '@certwright/core';
import { copyMigratedPgliteDataDir, createMigratedPgliteStorage } from '@certwright/storage-pg/testing';
import { verifyBackup } from '@certwright/storage-sql';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createTempDatabase as createTempPostgres,
  postgresSkipReason,
} from '../../storage-pg/test/helpers.js';
import { parseConfig } from '../src/config.js';
import { readBackupFile } from '../src/ops/backup-file.js';
import { listBackups, startScheduledBackups, takenAt } from '../src/schedulers/index.js';
import { makeTestPki } from './support/openssl-pki.js';
import { runServerCommand, startServerProcess } from './support/server-process.js';

const DAY = 24 * 3_600_000;
const dir = mkdtempSync(join(tmpdir(), 'cw-scheduled-backups-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('scheduled backups', () => {
  it('takes one backup per interval between instances, keeps the newest SVC_BACKUP_KEEP, and waits after a restart', async () => {
    const box = new SecretBox(SecretBox.generateKey());
    const storage = await createMigratedPgliteStorage({ secretBox: box });
    const backups = join(dir, 'leased');
    const clock = new ManualClock('2026-12-03T00:00:00Z');
    const ephemeral = new MemoryEphemeralStore({ clock });
    const make = (holder: string, store = ephemeral) =>
      startScheduledBackups({
        storage,
        box,
        dir: backups,
        intervalMs: DAY,
        keep: 2,
        release: 'test',
        ephemeral: store,
        logger: silentLogger,
        holder,
        clock,
      });
    const a = make('instance-a');
    const b = make('instance-b');
    try {
      await Promise.all([a.tick(), b.tick()]);
      expect(await listBackups(backups)).toHaveLength(1);
      writeFileSync(join(backups, 'notes.txt'), 'an operator file, not a backup');
      // Within the interval the lease is held: no second backup.
      await b.tick();
      expect(await listBackups(backups)).toHaveLength(1);

      clock.advance(DAY);
      await b.tick();
      clock.advance(DAY);
      await a.tick();
      const kept = await listBackups(backups);
      expect(kept.map((name) => takenAt(name)?.toISOString())).toEqual([
        '2026-12-04T00:00:00.000Z',
        '2026-12-05T00:00:00.000Z',
      ]);
      expect(readdirSync(backups).sort()).toEqual([...kept, 'notes.txt'].sort());

      const manifest = await verifyBackup(readBackupFile(join(backups, kept[1]!)));
      expect(manifest).toMatchObject({ engine: 'pglite', release: 'test', encryption_key_id: box.keyId });
      expect(manifest.parts.map((p) => p.table)).toContain('certificates');

      // A restarted instance has lost its lease, but the backup in the directory is recent.
      const restarted = make('instance-c', new MemoryEphemeralStore({ clock }));
      try {
        await restarted.tick();
        expect(await listBackups(backups)).toEqual(kept);
      } finally {
        await restarted.stop();
      }
    } finally {
      await a.stop();
      await b.stop();
      await storage.close();
    }
  });

  it('reads SVC_BACKUP_DIR, SVC_BACKUP_INTERVAL and SVC_BACKUP_KEEP, refusing invalid values', () => {
    const base = { SVC_TLS_CERT_PATH: 'c', SVC_TLS_KEY_PATH: 'k', SVC_AUTH_TYPE: 'none' };
    expect(parseConfig(base).backups).toEqual({ intervalMs: DAY, keep: 7 });
    expect(
      parseConfig({
        ...base,
        SVC_BACKUP_DIR: '/var/backups/cw',
        SVC_BACKUP_INTERVAL: '6h',
        SVC_BACKUP_KEEP: '28',
      }).backups,
    ).toEqual({ dir: '/var/backups/cw', intervalMs: 6 * 3_600_000, keep: 28 });
    expect(() => parseConfig({ ...base, SVC_BACKUP_KEEP: '0' })).toThrow(/SVC_BACKUP_KEEP/);
    expect(() => parseConfig({ ...base, SVC_BACKUP_INTERVAL: '500ms' })).toThrow(
      /SVC_BACKUP_INTERVAL: must be at least 1s/,
    );
    expect(() => parseConfig({ ...base, SVC_BACKUP_INTERVAL: 'daily' })).toThrow(/SVC_BACKUP_INTERVAL/);
  });

  it('backs up the embedded database while the server runs on it; the backup restores into PostgreSQL', async (ctx) => {
    const skip = await postgresSkipReason();
    if (skip) return ctx.skip(skip);
    const pki = makeTestPki(['server']);
    const backups = join(dir, 'running');
    const dataDir = mkdtempSync(join(dir, 'data-'));
    const key = Buffer.from((await copyMigratedPgliteDataDir(join(dataDir, 'pglite'))).key).toString(
      'base64',
    );
    const server = await startServerProcess({
      SVC_DATA_DIR: dataDir,
      SVC_ENCRYPTION_KEY: key,
      SVC_TLS_CERT_PATH: pki.issued.server!.cert,
      SVC_TLS_KEY_PATH: pki.issued.server!.key,
      SVC_AUTH_TYPE: 'none',
      SVC_BACKUP_DIR: backups,
      SVC_BACKUP_INTERVAL: '2s',
      SVC_BACKUP_KEEP: '2',
    });
    try {
      const deadline = Date.now() + 120_000;
      while ((server.output().match(/scheduled backup written/g) ?? []).length < 3) {
        if (Date.now() > deadline) throw new Error(`no three scheduled backups:\n${server.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    const kept = await listBackups(backups);
    expect(kept).toHaveLength(2);
    const database = await createTempPostgres();
    try {
      const restore = runServerCommand(['restore', '--in', join(backups, kept[1]!)], {
        SVC_DATABASE_URL: database.url,
        SVC_ENCRYPTION_KEY: key,
        SVC_DATA_DIR: mkdtempSync(join(dir, 'restore-')),
      });
      expect(await restore.exited, restore.stderr()).toBe(0);
      expect(JSON.parse(restore.stdout())).toMatchObject({ restored: true, from_engine: 'pglite' });
    } finally {
      await database.drop();
    }
  }, 400_000);
});
