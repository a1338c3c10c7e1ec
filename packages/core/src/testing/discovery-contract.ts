import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCertwrightError } from '../errors.js';
import type { NewDiscoveredCertificate, SightingInput } from '../ports/discovery-storage.js';
import type { Storage } from '../ports/storage.js';
import type { ContractOptions } from './ephemeral-contract.js';
import type { StorageContractSubject } from './storage-contract.js';

const DAY = 86_400_000;
const fp = () => randomUUID().replace(/-/g, '').repeat(2);

const codeOf = async (p: Promise<unknown>): Promise<unknown> => {
  try {
    await p;
    return 'resolved';
  } catch (error) {
    return isCertwrightError(error) ? error.code : error;
  }
};

function cert(fingerprint: string, over: Partial<NewDiscoveredCertificate> = {}): NewDiscoveredCertificate {
  return {
    fingerprint_sha256: fingerprint,
    subject: 'CN=www.contract.test',
    issuer: 'CN=Contract CA',
    serial_number: '1f',
    sans: ['www.contract.test'],
    not_before: new Date(Date.now() - DAY),
    not_after: new Date(Date.now() + 30 * DAY),
    key_algorithm: 'ECDSA',
    key_size: 256,
    signature_algorithm: 'ecdsaWithSHA256',
    self_signed: false,
    cert_pem: '-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n',
    chain_pem: '',
    ...over,
  };
}

const seen = (over: Partial<SightingInput> = {}): SightingInput => ({
  source: 'server-scanner',
  scan_id: null,
  address: '10.0.0.1',
  port: 443,
  sni: null,
  path: null,
  seen_at: new Date(),
  ...over,
});

/**
 * The discovery and endpoint-health repositories on one engine: deduplication by
 * fingerprint (also under concurrent records), sightings, filters, counts, due queries,
 * results and their retention.
 */
export function describeDiscoveryStorageContract(
  name: string,
  factory: () => Promise<StorageContractSubject>,
  options: ContractOptions = {},
): void {
  if (options.skip) {
    console.warn(`[discovery storage contract] skipping ${name}: ${options.skip}`);
    describe.skip(`Discovery storage contract: ${name}`, () => {
      it('skipped', () => {});
    });
    return;
  }
  describe(`Discovery storage contract: ${name}`, () => {
    let subject: StorageContractSubject;
    let s: Storage;
    beforeAll(async () => {
      subject = await factory();
      s = subject.storage;
    }, 120_000);
    afterAll(async () => {
      await subject?.close();
    });

    it('stores scan targets with their lists, updates them, finds due ones and deletes them', async () => {
      const now = new Date();
      const t = await s.scanTargets.create({
        name: `t ${randomUUID()}`,
        cidrs: ['10.1.0.0/24'],
        hosts: ['a.contract.test'],
        ports: [443, 8443],
        sni_names: ['x.contract.test'],
        interval_seconds: 3600,
        enabled: true,
        next_scan_at: new Date(now.getTime() - 1000),
      });
      expect(await s.scanTargets.require(t.id)).toMatchObject({
        cidrs: ['10.1.0.0/24'],
        ports: [443, 8443],
        enabled: true,
      });
      expect((await s.scanTargets.due(now, 1000)).map((x) => x.id)).toContain(t.id);
      const u = await s.scanTargets.update(t.id, { ports: [22], enabled: false });
      expect(u.ports).toEqual([22]);
      expect(u.hosts).toEqual(['a.contract.test']);
      expect((await s.scanTargets.due(now, 1000)).map((x) => x.id)).not.toContain(t.id);
      await s.scanTargets.delete(t.id);
      expect(await codeOf(s.scanTargets.require(t.id))).toBe('not_found');
      expect(await codeOf(s.scanTargets.delete(t.id))).toBe('not_found');
    });

    it('records scans, lists them newest first and fails stale running ones', async () => {
      const target = randomUUID();
      const old = await s.discoveryScans.create({
        target_id: target,
        source: 'server-scanner',
        started_at: new Date(Date.now() - 2 * 3600_000),
      });
      const fresh = await s.discoveryScans.create({
        target_id: target,
        source: 'server-scanner',
        started_at: new Date(),
      });
      expect(old.status).toBe('running');
      const listed = await s.discoveryScans.list({ target_id: target });
      expect(listed.items.map((x) => x.id)).toEqual([fresh.id, old.id]);
      expect(
        await s.discoveryScans.failStale(new Date(Date.now() - 3600_000), new Date()),
      ).toBeGreaterThanOrEqual(1);
      expect((await s.discoveryScans.require(old.id)).status).toBe('failed');
      expect((await s.discoveryScans.require(fresh.id)).status).toBe('running');
      const done = await s.discoveryScans.update(fresh.id, {
        status: 'completed',
        certificates_found: 2,
        errors: [{ address: '10.0.0.9', port: 443, sni: null, reason: 'timed_out', message: 'slow' }],
      });
      expect(done.errors[0]?.reason).toBe('timed_out');
      expect(done.certificates_found).toBe(2);
    });

    it('deduplicates by fingerprint and keeps one sighting per place', async () => {
      const f = fp();
      const a = await s.discovered.record(cert(f), seen({ port: 443 }));
      const b = await s.discovered.record(cert(f), seen({ port: 443, seen_at: new Date(Date.now() + 1000) }));
      const c = await s.discovered.record(cert(f), seen({ port: 8443 }));
      expect(a.created).toBe(true);
      expect(b.created).toBe(false);
      expect(c.record.id).toBe(a.record.id);
      expect(c.record.sightings).toHaveLength(2);
      expect((await s.discovered.getByFingerprint(f))?.id).toBe(a.record.id);
    });

    it('converges concurrent records of one fingerprint on a single record', async () => {
      const f = fp();
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => s.discovered.record(cert(f), seen({ address: `10.0.1.${i}` }))),
      );
      expect(new Set(results.map((r) => r.record.id)).size).toBe(1);
      expect(results.filter((r) => r.created)).toHaveLength(1);
      expect((await s.discovered.require(results[0]!.record.id)).sightings).toHaveLength(8);
    });

    it('links a sighting to a managed certificate, filters and counts', async () => {
      const issuer = `CN=Filter CA ${randomUUID()}`;
      const f1 = fp();
      const f2 = fp();
      const addr = `10.9.${Math.floor(Math.random() * 250)}.7`;
      await s.discovered.record(
        cert(f1, { issuer, not_after: new Date(Date.now() + 5 * DAY) }),
        seen({ address: addr, port: 636 }),
      );
      const linked = await s.discovered.record(
        cert(f2, { issuer }),
        seen({ path: '/etc/ssl/a.pem', address: null, port: null, source: 'ag-x' }),
        null,
      );
      expect(linked.record.status).toBe('unmanaged');
      const page = await s.discovered.list({ issuer: issuer.toLowerCase() });
      expect(page.total).toBe(2);
      expect(page.items[0]?.fingerprint_sha256).toBe(f1); // soonest expiry first
      expect(
        (await s.discovered.list({ seen_address: addr, seen_port: 636 })).items.map(
          (x) => x.fingerprint_sha256,
        ),
      ).toEqual([f1]);
      expect(
        (await s.discovered.list({ seen_address: '/etc/ssl/a.pem' })).items.map((x) => x.fingerprint_sha256),
      ).toEqual([f2]);
      expect(await s.discovered.count({ issuer, expires_before: new Date(Date.now() + 7 * DAY) })).toBe(1);
      const dismissed = await s.discovered.update(linked.record.id, { status: 'dismissed' });
      expect(dismissed.status).toBe('dismissed');
      const counts = await s.discovered.countByStatus();
      expect(counts.dismissed).toBeGreaterThanOrEqual(1);
      const byIssuer = await s.discovered.countByIssuer(1000);
      expect(byIssuer.find((x) => x.issuer === issuer)?.count).toBe(1);
      expect(await s.discovered.findManagedByFingerprint(fp())).toBeNull();
    });

    it('stores health checks, finds due ones, keeps results newest first and prunes them', async () => {
      const now = new Date();
      const c = await s.healthChecks.create({
        name: `hc ${randomUUID()}`,
        host: '10.0.0.5',
        port: 443,
        sni: 'svc.contract.test',
        expected_fingerprint: fp(),
        certificate_id: null,
        interval_seconds: 60,
        deployment_window_seconds: 0,
        enabled: true,
        next_check_at: new Date(now.getTime() - 1000),
      });
      expect(c.status).toBe('healthy');
      expect((await s.healthChecks.due(now, 10_000)).map((x) => x.id)).toContain(c.id);
      const observed = {
        fingerprint_sha256: fp(),
        subject: 'CN=a',
        issuer: 'CN=b',
        serial_number: '1',
        not_after: new Date(now.getTime() + DAY),
      };
      await s.transaction(async (tx) => {
        const locked = await tx.healthChecks.lockForUpdate(c.id);
        await tx.healthChecks.update(locked.id, {
          status: 'degraded',
          consecutive_failures: 2,
          observed,
          handshake_ms: 12.5,
          next_check_at: new Date(now.getTime() + 60_000),
        });
      });
      const got = await s.healthChecks.require(c.id);
      expect(got).toMatchObject({ status: 'degraded', consecutive_failures: 2, handshake_ms: 12.5 });
      expect(got.observed?.not_after.getTime()).toBe(observed.not_after.getTime());
      expect((await s.healthChecks.due(now, 10_000)).map((x) => x.id)).not.toContain(c.id);
      expect((await s.healthChecks.countByStatus()).degraded).toBeGreaterThanOrEqual(1);
      const unacked = await s.healthChecks.countUnacknowledged();
      expect(unacked).toBeGreaterThanOrEqual(1);
      await s.healthChecks.update(c.id, { acknowledged_at: new Date(), acknowledged_by: 'ops' });
      expect(await s.healthChecks.countUnacknowledged()).toBe(unacked - 1);
      for (let i = 0; i < 3; i++) {
        await s.healthChecks.addResult({
          check_id: c.id,
          checked_at: new Date(now.getTime() - (3 - i) * 1000 * DAY),
          status: 'healthy',
          success: true,
          fingerprint_sha256: null,
          tls_version: 'TLSv1.3',
          cipher: null,
          handshake_ms: i,
          error: null,
        });
      }
      const results = await s.healthChecks.listResults(c.id);
      expect(results.total).toBe(3);
      expect(results.items.map((r) => r.handshake_ms)).toEqual([2, 1, 0]);
      expect(await s.healthChecks.pruneResults(new Date(now.getTime() - 1500 * DAY))).toBeGreaterThanOrEqual(
        2,
      );
      expect((await s.healthChecks.listResults(c.id)).total).toBe(1);
      await s.healthChecks.delete(c.id);
      expect(await codeOf(s.healthChecks.require(c.id))).toBe('not_found');
      expect((await s.healthChecks.listResults(c.id)).total).toBe(0);
      expect(await codeOf(s.healthChecks.delete(c.id))).toBe('not_found');
      expect(await codeOf(s.healthChecks.lockForUpdate(c.id))).toBe('internal');
    });
  });
}
