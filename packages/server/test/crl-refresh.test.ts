import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createServices,
  DirectoryCrlPublisher,
  ManualClock,
  MemoryEphemeralStore,
  NotificationChannelRegistry,
  SecretBox,
  SYSTEM_ACTOR,
  silentLogger,
} from '@certwright/core';
import { createMigratedPgliteStorage } from '@certwright/storage-pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics } from '../src/metrics.js';
import { startCrlRefresh } from '../src/schedulers/index.js';

const HOUR = 3_600_000;
const clock = new ManualClock('2026-01-01T00:00:00Z');
let dir: string;
let storage: Awaited<ReturnType<typeof createMigratedPgliteStorage>>;
let services: ReturnType<typeof createServices>;
const metrics = createMetrics();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cw-crl-refresh-'));
  storage = await createMigratedPgliteStorage({ secretBox: new SecretBox(randomBytes(32)), clock });
  services = createServices(
    {
      storage,
      clock,
      logger: silentLogger,
      onOutcome: (event) => metrics.outcome(event),
      notifications: { channels: new NotificationChannelRegistry() },
    },
    {
      pki: {
        publicBaseUrl: 'https://pki.example.test:8443',
        crlPublisher: new DirectoryCrlPublisher(dir),
        crlPublication: { sleep: async () => undefined },
      },
    },
  );
});
afterAll(async () => {
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The published CRL's lastUpdate (thisUpdate) as openssl reads it. */
function publishedThisUpdate(issuerId: string): string {
  const out = spawnSync('openssl', ['crl', '-inform', 'DER', '-noout', '-lastupdate'], {
    input: readFileSync(join(dir, issuerId, 'crl.crl')),
    encoding: 'utf8',
  });
  expect(out.status).toBe(0);
  return out.stdout.trim();
}

describe('the CRL refresh scheduler', () => {
  it('publishes every enabled issuer’s CRL and rebuilds it once due, with nobody fetching or revoking', async () => {
    const issuer = await services.issuers.create(SYSTEM_ACTOR, {
      name: 'Refreshed CA',
      type: 'Local',
      config: {},
    });
    const disabled = await services.issuers.create(SYSTEM_ACTOR, {
      name: 'Off CA',
      type: 'Local',
      config: {},
    });
    await services.issuers.update(SYSTEM_ACTOR, disabled.id, { enabled: false });
    const task = startCrlRefresh({
      services,
      ephemeral: new MemoryEphemeralStore({ clock }),
      logger: silentLogger,
      holder: 'a',
      intervalMs: HOUR,
    });
    try {
      expect(await task.tick()).toBe(true);
      await services.pki.revocationStatus.publications!.settled();
      const first = publishedThisUpdate(issuer.id);
      expect(first).toBe('lastUpdate=Jan  1 00:00:00 2026 GMT');
      // /metrics tells the CRL's size and dates, and that it was published.
      const gauge = async (series: string) => {
        const line = (await metrics.render()).body.split('\n').find((l) => l.startsWith(series));
        return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
      };
      const labels = `{issuer="${issuer.id}",crl="crl"`;
      expect(await gauge(`certwright_crl_bytes${labels}}`)).toBe(
        readFileSync(join(dir, issuer.id, 'crl.crl')).length,
      );
      const thisUpdate = Date.parse('2026-01-01T00:00:00Z') / 1000;
      expect(await gauge(`certwright_crl_this_update_timestamp_seconds${labels}}`)).toBe(thisUpdate);
      expect(await gauge(`certwright_crl_next_update_timestamp_seconds${labels}}`)).toBe(thisUpdate + 86_400);
      expect(await gauge(`certwright_crl_publications_total${labels},outcome="success"}`)).toBe(1);
      // A disabled issuer is not rebuilt or published.
      expect(() => readFileSync(join(dir, disabled.id, 'crl.crl'))).toThrow();

      // Within the CRL refresh (1 h) the cached CRL stands: nothing is rebuilt.
      clock.advance(HOUR / 2);
      expect(await task.tick()).toBe(true);
      await services.pki.revocationStatus.publications!.settled();
      expect(publishedThisUpdate(issuer.id)).toBe(first);

      // Once due, the tick rebuilds it and the directory holds the new one.
      clock.advance(HOUR);
      expect(await task.tick()).toBe(true);
      await services.pki.revocationStatus.publications!.settled();
      expect(publishedThisUpdate(issuer.id)).toBe('lastUpdate=Jan  1 01:30:00 2026 GMT');
      expect(await gauge(`certwright_crl_publications_total${labels},outcome="success"}`)).toBe(2);
    } finally {
      await task.stop();
    }
  });
});
