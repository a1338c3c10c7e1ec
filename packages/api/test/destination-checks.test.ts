import { ManualClock } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AcmeTestClient, newAccountKey, ORIGIN } from './support/acme-client.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Destinations and names refused when they are written, not each time they are used: a scan
 * target naming a loopback host, a webhook allowlist entry that delivery always refuses, an
 * ACME order for localhost. Nothing is stored and nothing is connected to (the checks run on
 * the text alone).
 */

let app: TestApp;
let acme: AcmeTestClient;

beforeAll(async () => {
  app = await createTestApp({
    clock: new ManualClock('2026-03-01T00:00:00Z'),
    handler: { rateLimits: { enrollment: 0 } },
  });
  acme = new AcmeTestClient(app.handler);
}, 180_000);
afterAll(() => app?.close());

describe('scan targets refuse loopback hosts at create and update', () => {
  it('refuses loopback literals and localhost names in hosts, naming the entry; stores nothing', async () => {
    for (const host of [
      '127.0.0.1',
      '127.8.9.10',
      '::1',
      '[::1]',
      '::ffff:127.0.0.1',
      'localhost',
      'db.localhost',
    ]) {
      const res = await app.call('POST', '/api/v1/network-scan/targets', {
        name: 'loop',
        hosts: ['web.example.test', host],
        ports: [443],
      });
      expect({ host, status: res.status }).toEqual({ host, status: 400 });
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['hosts.1']);
      expect(res.body.detail).toMatch(/loopback/);
    }
    // Metadata and link-local literals too, as for cidrs.
    for (const host of ['169.254.169.254', 'fe80::1']) {
      const res = await app.call('POST', '/api/v1/network-scan/targets', {
        name: 'x',
        hosts: [host],
        ports: [443],
      });
      expect({ host, status: res.status }).toEqual({ host, status: 400 });
    }
    expect((await app.call('GET', '/api/v1/network-scan/targets')).body.total).toBe(0);
  });

  it('refuses them on update too, and keeps the stored hosts', async () => {
    const created = await app.call('POST', '/api/v1/network-scan/targets', {
      name: 'fine',
      hosts: ['web.example.test'],
      ports: [443],
    });
    expect(created.status).toBe(201);
    const res = await app.call('PUT', `/api/v1/network-scan/targets/${created.body.id}`, {
      hosts: ['127.0.0.1'],
    });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe('hosts.0');
    const stored = await app.call('GET', `/api/v1/network-scan/targets/${created.body.id}`);
    expect(stored.body.hosts).toEqual(['web.example.test']);
  });
});

describe('the webhook allowlist refuses entries delivery always refuses', () => {
  const SECURITY = '/api/system/settings/webhook-security';

  it('refuses documentation, benchmarking, link-local and metadata entries, naming them; keeps the stored list', async () => {
    expect((await app.call('PUT', SECURITY, { allowed_private_ranges: '10.0.0.0/8' })).status).toBe(200);
    for (const entry of [
      '192.0.2.10',
      '198.51.100.0/24',
      '203.0.113.0/25',
      '2001:db8::/32',
      '198.18.0.0/15',
      '169.254.0.0/16',
      '169.254.169.254',
    ]) {
      const res = await app.call('PUT', SECURITY, { allowed_private_ranges: `10.0.0.0/8, ${entry}` });
      expect({ entry, status: res.status }).toEqual({ entry, status: 400 });
      expect(res.body.errors[0].field).toBe('allowed_private_ranges');
      expect(res.body.detail).toContain(entry.includes('/') ? entry : entry.split('/')[0]);
    }
    expect((await app.call('GET', SECURITY)).body.allowed_private_ranges).toBe('10.0.0.0/8');
  });

  it('keeps accepting entries that can admit a private address, however wide', async () => {
    for (const value of [
      '10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16',
      'fd00::/8',
      '100.64.0.0/10',
      '0.0.0.0/0',
      '192.0.0.0/8',
    ]) {
      const res = await app.call('PUT', SECURITY, { allowed_private_ranges: value });
      expect({ value, status: res.status }).toEqual({ value, status: 200 });
    }
  });
});

describe('ACME refuses orders for localhost unless the profile allows them', () => {
  async function order(identifiers: { type: string; value: string }[], profilePath = '') {
    const base = `${ORIGIN}/acme${profilePath}`;
    const key = newAccountKey();
    const created = await acme.post(`${base}/new-account`, { termsOfServiceAgreed: true }, { key });
    expect(created.status).toBe(201);
    return acme.post(`${base}/new-order`, { identifiers }, { key, kid: created.headers.get('location')! });
  }

  it('answers rejectedIdentifier for localhost, names below it and loopback addresses', async () => {
    await app.call('PUT', '/api/v1/profiles/prof-default', { allow_ip_sans: true });
    for (const identifier of [
      { type: 'dns', value: 'localhost' },
      { type: 'dns', value: 'LocalHost' },
      { type: 'dns', value: 'app.localhost' },
      { type: 'dns', value: '*.localhost' },
      { type: 'ip', value: '127.0.0.1' },
      { type: 'ip', value: '::1' },
    ]) {
      const res = await order([{ type: 'dns', value: 'www.example.test' }, identifier]);
      expect({ identifier, status: res.status, type: res.body.type }).toEqual({
        identifier,
        status: 400,
        type: 'urn:ietf:params:acme:error:rejectedIdentifier',
      });
      expect(res.body.detail).toMatch(/allow_localhost/);
    }
    expect((await order([{ type: 'dns', value: 'www.example.test' }])).status).toBe(201);
  });

  it('takes them on a profile that sets acme.allow_localhost', async () => {
    const profile = await app.call('POST', '/api/v1/profiles', {
      name: 'local rig',
      allow_ip_sans: true,
      enrollment: {
        issuer_id: 'iss-local',
        owner_id: 'own-default',
        team_id: 'team-default',
        renewal_policy_id: 'rp-default',
      },
      acme: { enabled: true, path_id: 'local-rig', allow_localhost: true },
    });
    expect(profile.status).toBe(201);
    expect(profile.body.acme.allow_localhost).toBe(true);
    const res = await order(
      [
        { type: 'dns', value: 'localhost' },
        { type: 'ip', value: '127.0.0.1' },
      ],
      '/profile/local-rig',
    );
    expect(res.status).toBe(201);
    expect(res.body.identifiers).toEqual([
      { type: 'dns', value: 'localhost' },
      { type: 'ip', value: '127.0.0.1' },
    ]);
  });
});
