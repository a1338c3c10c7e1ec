import { ManualClock } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLifecycleApp, type LifecycleApp, openssl } from './lifecycle-support.js';

let app: LifecycleApp;
const clock = new ManualClock('2026-01-01T00:00:00Z');
const BASE = 'https://pki.example.test:8443';
const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g;
const transport = { remoteAddress: '127.0.0.1' };

beforeAll(async () => {
  app = await createLifecycleApp({ clock, pki: { publicBaseUrl: BASE } });
});
afterAll(() => app.close());

async function issue(
  issuerId: string,
): Promise<{ id: string; serial: string; leaf: string; chain: string[] }> {
  const cert = await app.createCertificate({ issuer_id: issuerId });
  const issued = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`);
  expect(issued.status, JSON.stringify(issued.body)).toBe(200);
  const pem = await (await app.call('GET', `/api/v1/certificates/${cert.id}/export?format=pem`)).text();
  const [leaf, ...chain] = pem.match(PEM_CERT)!;
  return { id: cert.id, serial: issued.body.version.serial_number, leaf: leaf!, chain };
}

async function fetchCrl(path: string): Promise<{ status: number; pem: string }> {
  const res = await app.handler(
    new Request(`https://x${path}`, { headers: { accept: 'application/x-pem-file' } }),
    transport,
  );
  return { status: res.status, pem: await res.text() };
}

const crlText = (pem: string) => openssl(['crl', '-noout', '-text', '-in', { name: 'c.pem', file: pem }]);
const crlNumber = (text: string) => BigInt(`0x${text.match(/X509v3 CRL Number:\s*\n\s*([0-9A-F]+)/)![1]}`);

/** `openssl verify` at the service clock's time; returns its output, success or not. */
function verify(leaf: string, chain: string[], crls: string[], useDeltas: boolean): string {
  const attime = String(Math.floor(clock.now().getTime() / 1000));
  try {
    return openssl([
      'verify',
      '-attime',
      attime,
      '-crl_check',
      ...(useDeltas ? ['-use_deltas'] : []),
      '-CAfile',
      { name: 'ca.pem', file: chain.join('') },
      '-CRLfile',
      { name: 'crls.pem', file: crls.join('') },
      { name: 'leaf.pem', file: leaf },
    ]);
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    return `${e.stdout ?? ''}${e.stderr ?? ''}`;
  }
}

describe('delta CRLs', () => {
  it('lists revocations since the base in a delta that openssl -use_deltas applies, and leaves the base alone', async () => {
    const created = await app.json('POST', '/api/v1/issuers', {
      name: 'Delta CA',
      type: 'Local',
      config: { delta_crl: { enabled: true, interval: '15m', base_interval: '1d' } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const issuerId = created.body.id as string;
    const revoked = await issue(issuerId);
    const kept = await issue(issuerId);

    const leafText = openssl(['x509', '-noout', '-text', '-in', { name: 'l.pem', file: revoked.leaf }]);
    expect(leafText).toMatch(
      new RegExp(
        `X509v3 Freshest CRL:\\s*\\n\\s*Full Name:\\s*\\n\\s*URI:${BASE}/.well-known/pki/crl/${issuerId}/delta`,
      ),
    );

    const base = await fetchCrl(`/.well-known/pki/crl/${issuerId}`);
    expect(base.status).toBe(200);
    const baseNumber = crlNumber(crlText(base.pem));
    clock.advance(60_000);
    const revoke = await app.json('POST', `/api/v1/certificates/${revoked.id}/revoke`, {
      reason: 'keyCompromise',
    });
    expect(revoke.status).toBe(200);

    // The base stands: relying parties keep their copy; the delta carries the revocation.
    const baseAfter = await fetchCrl(`/.well-known/pki/crl/${issuerId}`);
    expect(baseAfter.pem).toBe(base.pem);
    const delta = await fetchCrl(`/.well-known/pki/crl/${issuerId}/delta`);
    expect(delta.status).toBe(200);
    const deltaText = crlText(delta.pem);
    expect(deltaText).toMatch(
      new RegExp(`X509v3 Delta CRL Indicator: critical\\s*\\n\\s*${baseNumber.toString(16).toUpperCase()}`),
    );
    expect(crlNumber(deltaText)).toBeGreaterThan(baseNumber);
    expect(deltaText.toLowerCase()).toContain(revoked.serial);
    expect(deltaText.toLowerCase()).not.toContain(kept.serial);
    expect(deltaText).toMatch(/Next Update: Jan {2}1 00:16:00 2026 GMT/);

    expect(verify(revoked.leaf, revoked.chain, [base.pem], false)).toMatch(/: OK/);
    expect(verify(revoked.leaf, revoked.chain, [base.pem, delta.pem], true)).toMatch(/certificate revoked/);
    expect(verify(kept.leaf, kept.chain, [base.pem, delta.pem], true)).toMatch(/: OK/);

    // Once the base is due it is rebuilt with the revocation, and the next delta points at it.
    clock.advance(86_400_000);
    const rebuilt = await fetchCrl(`/.well-known/pki/crl/${issuerId}`);
    const rebuiltNumber = crlNumber(crlText(rebuilt.pem));
    expect(crlText(rebuilt.pem).toLowerCase()).toContain(revoked.serial);
    const nextDelta = crlText((await fetchCrl(`/.well-known/pki/crl/${issuerId}/delta`)).pem);
    expect(nextDelta).toMatch(
      new RegExp(`Delta CRL Indicator: critical\\s*\\n\\s*${rebuiltNumber.toString(16).toUpperCase()}`),
    );
    expect(nextDelta.toLowerCase()).not.toContain(revoked.serial);
  });

  it('answers 404 for the delta of an issuer without deltas, and certificates carry no freshestCRL', async () => {
    const plain = await issue(app.ids.issuer);
    expect(openssl(['x509', '-noout', '-text', '-in', { name: 'l.pem', file: plain.leaf }])).not.toContain(
      'Freshest CRL',
    );
    expect((await fetchCrl(`/.well-known/pki/crl/${app.ids.issuer}/delta`)).status).toBe(404);
    expect((await fetchCrl(`/.well-known/pki/crl/${app.ids.issuer}/other`)).status).toBe(404);
  });

  it('refuses delta settings it cannot honour with a 400 naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ enabled: true, interval: '5s' }, 'config.delta_crl.interval'],
      [{ enabled: true, interval: 'soon' }, 'config.delta_crl.interval'],
      [{ enabled: true, interval: '2h', base_interval: '1h' }, 'config.delta_crl.base_interval'],
      [{ enabled: true, urls: ['file:///tmp/delta.crl'] }, 'config.delta_crl.urls.0'],
      [{ enabled: 'yes' }, 'config.delta_crl.enabled'],
    ];
    for (const [delta_crl, field] of cases) {
      const res = await app.json('POST', '/api/v1/issuers', {
        name: 'Bad delta',
        type: 'Local',
        config: { delta_crl },
      });
      expect(res.status, JSON.stringify(delta_crl)).toBe(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
    }
  });
});
