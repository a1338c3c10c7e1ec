import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CrlPublication, DirectoryCrlPublisher, ManualClock } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLifecycleApp, type LifecycleApp, openssl } from './lifecycle-support.js';

const clock = new ManualClock('2026-01-01T00:00:00Z');
const transport = { remoteAddress: '127.0.0.1' };
let dir: string;
let app: LifecycleApp;
const seen: CrlPublication[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cw-crl-publish-'));
  const directory = new DirectoryCrlPublisher(dir);
  app = await createLifecycleApp({
    clock,
    pki: {
      publicBaseUrl: 'https://pki.example.test:8443',
      crlPublisher: {
        target: directory.target,
        publish: async (p) => {
          seen.push(p);
          await directory.publish(p);
        },
      },
      crlPublication: { sleep: async () => undefined },
    },
  });
});
afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

const served = async (path: string) =>
  Buffer.from(await (await app.handler(new Request(`https://x${path}`), transport)).arrayBuffer());
const settled = () => app.services.pki.revocationStatus.publications!.settled();
const onDisk = (issuerId: string, name: string) => readFileSync(join(dir, issuerId, name));

describe('CRL publishing to a directory', () => {
  it('writes every regenerated complete and delta CRL, DER and PEM, and the CA certificate', async () => {
    const created = await app.json('POST', '/api/v1/issuers', {
      name: 'Published CA',
      type: 'Local',
      config: { delta_crl: { enabled: true, interval: '15m', base_interval: '1h' } },
    });
    const issuerId = created.body.id as string;
    const certs = [];
    for (let i = 0; i < 3; i++) {
      const cert = await app.createCertificate({ issuer_id: issuerId });
      await app.json('POST', `/api/v1/certificates/${cert.id}/issue`);
      certs.push(cert);
    }
    const base = await served(`/.well-known/pki/crl/${issuerId}`);
    await settled();
    expect(onDisk(issuerId, 'crl.crl')).toEqual(base);
    expect(onDisk(issuerId, 'crl.pem').toString()).toBe(
      openssl(['crl', '-inform', 'DER', '-in', { name: 'b.crl', file: base }]),
    );
    const chain = await (await app.call('GET', `/api/v1/issuers/${issuerId}/chain`)).text();
    expect(
      openssl(['x509', '-inform', 'DER', '-in', { name: 'ca.cer', file: onDisk(issuerId, 'ca.cer') }]),
    ).toBe(chain.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n/)![0]);

    // Each revocation regenerates the delta; each one is on disk before the next.
    for (const cert of certs) {
      clock.advance(1000);
      expect(
        (await app.json('POST', `/api/v1/certificates/${cert.id}/revoke`, { reason: 'superseded' })).status,
      ).toBe(200);
      await settled();
      const delta = await served(`/.well-known/pki/crl/${issuerId}/delta`);
      expect(onDisk(issuerId, 'delta.crl')).toEqual(delta);
      expect(onDisk(issuerId, 'delta.pem').toString()).toMatch(/^-----BEGIN X509 CRL-----/);
    }
    // A base regeneration on its schedule is published too.
    clock.advance(3_600_000);
    const rebuilt = await served(`/.well-known/pki/crl/${issuerId}`);
    await settled();
    expect(rebuilt).not.toEqual(base);
    expect(onDisk(issuerId, 'crl.crl')).toEqual(rebuilt);

    const mine = seen.filter((p) => p.issuerId === issuerId);
    expect(mine.map((p) => p.kind)).toEqual(['crl', 'delta', 'delta', 'delta', 'crl']);
    const numbers = mine.map((p) => p.crlNumber);
    expect([...numbers].sort((a, b) => (a < b ? -1 : 1))).toEqual(numbers);

    const status = await app.json('GET', `/api/v1/issuers/${issuerId}/crl-publication`);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({
      issuer_id: issuerId,
      configured: true,
      target: 'directory',
      crl: { crl_number: mine[4]!.crlNumber.toString(), last_error: null },
      delta: { crl_number: mine[3]!.crlNumber.toString(), last_error: null },
    });
    const events = await app.json('GET', `/api/v1/audit?action=crl_published&resource_id=${issuerId}`);
    expect(events.body.total).toBe(5);
    expect((await app.json('GET', '/api/v1/issuers/iss-none/crl-publication')).status).toBe(404);
  });

  it('retries a failing target, then reports the failure by its code without the path, and audits it', async () => {
    const created = await app.json('POST', '/api/v1/issuers', { name: 'Blocked CA', type: 'Local' });
    const issuerId = created.body.id as string;
    // A file where the issuer's folder should be: every write fails with ENOTDIR or EEXIST.
    writeFileSync(join(dir, issuerId), 'in the way');
    const before = seen.length;
    await served(`/.well-known/pki/crl/${issuerId}`);
    await settled();
    expect(seen.length - before).toBe(3);
    const status = await app.json('GET', `/api/v1/issuers/${issuerId}/crl-publication`);
    expect(status.body.crl.last_error).toMatch(/^publish failed \((ENOTDIR|EEXIST)\)$/);
    expect(status.body.crl.last_published_at).toBeNull();
    expect(JSON.stringify(status.body)).not.toContain(dir);
    const failed = await app.json(
      'GET',
      `/api/v1/audit?action=crl_publication_failed&resource_id=${issuerId}`,
    );
    expect(failed.body.total).toBe(1);
    expect(failed.body.data[0].details).toMatchObject({ kind: 'crl', attempts: 3 });
  });
});
