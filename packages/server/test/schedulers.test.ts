import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createServices,
  ManualClock,
  MemoryEphemeralStore,
  NotificationChannelRegistry,
  SecretBox,
  SYSTEM_ACTOR,
  silentLogger,
} from '@certwright/core';
import { createPgliteStorage } from '@certwright/storage-pg';
import { createMigratedPgliteStorage } from '@certwright/storage-pg/testing';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.js';
import { createMetrics } from '../src/metrics.js';
import {
  startJobTimeouts,
  startLeasedTask,
  startNotificationRetry,
  startStorageMaintenance,
} from '../src/schedulers/index.js';
import { openStorage } from '../src/storage.js';

// Long intervals: the tests drive ticks by hand; the timers never fire during a test.
const HOUR = 3_600_000;

describe('leased scheduler tasks', () => {
  it('runs each tick on one instance only, and again once the lease has expired', async () => {
    const clock = new ManualClock();
    const ephemeral = new MemoryEphemeralStore({ clock });
    let runs = 0;
    const make = (holder: string) =>
      startLeasedTask({
        name: 'scheduler:test',
        holder,
        intervalMs: 120_000,
        ephemeral,
        logger: silentLogger,
        run: async () => {
          runs += 1;
        },
      });
    const a = make('instance-a');
    const b = make('instance-b');
    expect(await a.tick()).toBe(true);
    expect(await b.tick()).toBe(false);
    expect(runs).toBe(1);
    clock.advance(120_000);
    expect(await b.tick()).toBe(true);
    expect(runs).toBe(2);
    await a.stop();
    await b.stop();
    expect(await a.tick()).toBe(false);
  });

  it('survives a failing tick and does not stack overlapping ticks', async () => {
    const clock = new ManualClock();
    const ephemeral = new MemoryEphemeralStore({ clock });
    let release: () => void = () => {};
    let runs = 0;
    const task = startLeasedTask({
      name: 'scheduler:slow',
      holder: 'one',
      intervalMs: HOUR,
      ephemeral,
      logger: silentLogger,
      run: () => {
        runs += 1;
        if (runs === 1) return Promise.reject(new Error('database down'));
        return new Promise<void>((resolve) => {
          release = resolve;
        });
      },
    });
    expect(await task.tick()).toBe(false); // failed, logged, not thrown
    clock.advance(HOUR);
    const first = task.tick();
    const second = task.tick(); // joins the tick in progress
    await Promise.resolve();
    release();
    expect(await first).toBe(true);
    expect(await second).toBe(true);
    expect(runs).toBe(2);
    await task.stop();
  });

  it('reports every tick to /metrics: ok, failed and skipped by scheduler, the last success and the duration', async () => {
    const clock = new ManualClock();
    const ephemeral = new MemoryEphemeralStore({ clock });
    const metrics = createMetrics();
    let fail = false;
    const make = (holder: string) =>
      startLeasedTask({
        name: 'scheduler:renewal-scan',
        holder,
        intervalMs: HOUR,
        ephemeral,
        logger: silentLogger,
        onTick: (t) => metrics.scheduler(t),
        run: async () => {
          if (fail) throw new Error('database down');
        },
      });
    const a = make('instance-a');
    const b = make('instance-b');
    const before = Date.now() / 1000;
    expect(await a.tick()).toBe(true);
    expect(await b.tick()).toBe(false); // a holds the lease
    clock.advance(HOUR);
    fail = true;
    expect(await a.tick()).toBe(false);
    const { body } = await metrics.render();
    const line = (series: string) => {
      const found = body.split('\n').find((l) => l.startsWith(series));
      return found === undefined ? undefined : Number(found.slice(found.lastIndexOf(' ') + 1));
    };
    expect(line('certwright_scheduler_ticks_total{scheduler="renewal-scan",outcome="ok"}')).toBe(1);
    expect(line('certwright_scheduler_ticks_total{scheduler="renewal-scan",outcome="skipped"}')).toBe(1);
    expect(line('certwright_scheduler_ticks_total{scheduler="renewal-scan",outcome="failed"}')).toBe(1);
    // The failed tick leaves the last success where the ok one put it.
    const lastOk = line('certwright_scheduler_last_success_timestamp_seconds{scheduler="renewal-scan"}');
    expect(lastOk).toBeGreaterThanOrEqual(Math.floor(before));
    expect(lastOk).toBeLessThanOrEqual(Date.now() / 1000);
    // Both ticks that ran were timed; the skipped one was not.
    expect(line('certwright_scheduler_tick_duration_seconds_count{scheduler="renewal-scan"}')).toBe(2);
    await a.stop();
    await b.stop();
  });

  it('wires the notification sweep and the job-timeout sweep to the services', async () => {
    const clock = new ManualClock();
    const storage = await createMigratedPgliteStorage({ secretBox: new SecretBox(randomBytes(32)), clock });
    try {
      const services = createServices({
        storage,
        clock,
        logger: silentLogger,
        notifications: { channels: new NotificationChannelRegistry() },
      });
      const ephemeral = new MemoryEphemeralStore({ clock });
      const event = await services.notifications.create(SYSTEM_ACTOR, {
        type: 'RenewalFailure',
        channel: 'email',
        recipient: 'ops@example.test',
        subject: 's',
        message: 'm',
      });
      const retry = startNotificationRetry({
        services,
        ephemeral,
        logger: silentLogger,
        intervalMs: HOUR,
        holder: 'a',
      });
      expect(await retry.tick()).toBe(true);
      // No email channel is registered in this process: undeliverable, never shown as sent.
      expect((await services.notifications.get(event.id)).status).toBe('undeliverable');
      await retry.stop();

      const timeouts = startJobTimeouts({
        services,
        ephemeral,
        logger: silentLogger,
        intervalMs: HOUR,
        holder: 'a',
      });
      expect(await timeouts.tick()).toBe(true);
      await timeouts.stop();
    } finally {
      await storage.close();
    }
  });
});

describe('storage maintenance scheduler', () => {
  it('runs the embedded database maintenance (ANALYZE) on one instance per tick', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cw-maintenance-'));
    const config = parseConfig({
      SVC_AUTH_TYPE: 'none',
      SVC_DATA_DIR: dir,
      SVC_TLS_CERT_PATH: '/x',
      SVC_TLS_KEY_PATH: '/y',
    });
    const opened = await openStorage(config, silentLogger, {
      key: SecretBox.generateKey(),
      origin: 'configured',
    });
    try {
      // The statistics themselves are checked in storage-pg's maintenance test; here: the
      // server's storage wires PGlite's real maintenance, and the lease lets one instance run it.
      const reports: unknown[] = [];
      const maintain = async () => {
        const report = await opened.maintain();
        reports.push(report);
        return report;
      };
      const clock = new ManualClock();
      const ephemeral = new MemoryEphemeralStore({ clock });
      const make = (holder: string) =>
        startStorageMaintenance({ maintain, ephemeral, logger: silentLogger, holder });
      const a = make('instance-a');
      const b = make('instance-b');
      expect(await a.tick()).toBe(true);
      expect(await b.tick()).toBe(false);
      expect(reports).toEqual([{ analyzed: true, durationMs: expect.any(Number) }]);
      await a.stop();
      await b.stop();
    } finally {
      await opened.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
