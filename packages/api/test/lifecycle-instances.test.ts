import { randomBytes } from 'node:crypto';
import {
  createServices,
  ManualClock,
  MemoryEphemeralStore,
  SecretBox,
  SYSTEM_ACTOR,
  silentLogger,
} from '@certwright/core';
import { buildCertId, der, readCertificate } from '@certwright/core/pki';
import type { createPgliteStorage } from '@certwright/storage-pg';
import { createMigratedPgliteStorage } from '@certwright/storage-pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CertwrightHandler, createHandler } from '../src/index.js';
import { KEY, openssl } from './lifecycle-support.js';

/**
 * Two server instances on one database: each has its own in-process CRL/OCSP caches, and the
 * only thing they share besides storage is the EphemeralStore (Redis in production, one
 * MemoryEphemeralStore here). A revocation through one must be visible through the other.
 */

const clock = new ManualClock('2026-01-01T00:00:00Z');
let storage: Awaited<ReturnType<typeof createPgliteStorage>>;
let a: CertwrightHandler;
let b: CertwrightHandler;
let issuerId: string;
let ownerId: string;
let teamId: string;

const call = (handler: CertwrightHandler, method: string, path: string, body?: unknown) =>
  handler(
    new Request(`https://localhost:8443${path}`, {
      method,
      headers: {
        authorization: `Bearer ${KEY}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }),
    { remoteAddress: '127.0.0.1' },
  );

beforeAll(async () => {
  storage = await createMigratedPgliteStorage({ secretBox: new SecretBox(randomBytes(32)), clock });
  const ephemeral = new MemoryEphemeralStore({ clock });
  const instance = () =>
    createHandler({
      auth: { type: 'api-key', secret: KEY },
      services: createServices({ storage, clock, logger: silentLogger, ephemeral }),
    });
  a = instance();
  b = instance();
  const setup = createServices({ storage, clock, logger: silentLogger, ephemeral });
  ownerId = (await setup.owners.create(SYSTEM_ACTOR, { name: 'owner', email: 'o@example.test' })).id;
  teamId = (await setup.teams.create(SYSTEM_ACTOR, { name: 'team' })).id;
  issuerId = (await setup.issuers.create(SYSTEM_ACTOR, { name: 'Shared CA', type: 'Local' })).id;
});
afterAll(() => storage.close());

async function issuedCertificate(): Promise<{ id: string; serial: string }> {
  const created = await call(a, 'POST', '/api/v1/certificates', {
    name: `cert-${randomBytes(4).toString('hex')}`,
    common_name: 'app.example.test',
    renewal_policy_id: 'rp-default',
    issuer_id: issuerId,
    owner_id: ownerId,
    team_id: teamId,
  });
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as { id: string };
  const issued = await call(a, 'POST', `/api/v1/certificates/${id}/issue`);
  expect(issued.status).toBe(200);
  return {
    id,
    serial: ((await issued.json()) as { version: { serial_number: string } }).version.serial_number,
  };
}

/** Cacheable OCSP (GET, no nonce) through one instance, as openssl prints it. */
async function ocspStatus(handler: CertwrightHandler, serial: string): Promise<string> {
  const chain = await (await call(handler, 'GET', `/api/v1/issuers/${issuerId}/chain`)).text();
  const issuingPem = chain.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/)![0];
  const request = der.sequence(
    der.sequence(der.sequence(der.sequence(buildCertId(readCertificate(issuingPem), serial, 'sha256').der))),
  );
  const b64 = encodeURIComponent(Buffer.from(request).toString('base64'));
  const res = await call(handler, 'GET', `/.well-known/pki/ocsp/${issuerId}/${b64}`);
  expect(res.status).toBe(200);
  const text = openssl([
    'ocsp',
    '-respin',
    { name: 'r.der', file: Buffer.from(await res.arrayBuffer()) },
    '-resp_text',
    '-noverify',
  ]);
  return text.match(/Cert Status: (\w+)/)![1]!;
}

/** A POSTed request with a nonce (RFC 8954), answered freshly signed, as openssl prints it. */
async function ocspStatusWithNonce(handler: CertwrightHandler, serial: string): Promise<string> {
  const chain = await (await call(handler, 'GET', `/api/v1/issuers/${issuerId}/chain`)).text();
  const issuingPem = chain.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/)![0];
  const certId = buildCertId(readCertificate(issuingPem), serial, 'sha1').der;
  const nonce = der.sequence(
    der.oid('1.3.6.1.5.5.7.48.1.2'),
    der.octetString(der.octetString(randomBytes(16))),
  );
  const request = der.sequence(
    der.sequence(der.sequence(der.sequence(certId)), der.explicit(2, der.sequence(nonce))),
  );
  const res = await handler(
    new Request(`https://localhost:8443/.well-known/pki/ocsp/${issuerId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/ocsp-request' },
      body: new Uint8Array(request),
    }),
    { remoteAddress: '127.0.0.1' },
  );
  expect(res.status).toBe(200);
  expect(res.headers.get('cache-control')).toBe('no-store');
  const text = openssl([
    'ocsp',
    '-respin',
    { name: 'r.der', file: Buffer.from(await res.arrayBuffer()) },
    '-resp_text',
    '-noverify',
  ]);
  expect(text).toContain('OCSP Nonce');
  return text.match(/Cert Status: (\w+)/)![1]!;
}

async function crlText(handler: CertwrightHandler): Promise<string> {
  const res = await call(handler, 'GET', `/.well-known/pki/crl/${issuerId}`);
  expect(res.status).toBe(200);
  const crl = Buffer.from(await res.arrayBuffer());
  return openssl([
    'crl',
    '-inform',
    'DER',
    '-noout',
    '-text',
    '-in',
    { name: 'c.crl', file: crl },
  ]).toLowerCase();
}

describe('CRL and OCSP caches across instances sharing one database and one EphemeralStore', () => {
  it('an instance that did not revoke answers revoked and lists the serial right after the revoke returns', async () => {
    const cert = await issuedCertificate();
    // Warm instance B's caches with the pre-revocation answers.
    expect(await ocspStatus(b, cert.serial)).toBe('good');
    expect(await crlText(b)).not.toContain(cert.serial);

    const revoke = await call(a, 'POST', `/api/v1/certificates/${cert.id}/revoke`, {
      reason: 'keyCompromise',
    });
    expect(revoke.status).toBe(200);

    expect(await ocspStatus(b, cert.serial)).toBe('revoked');
    expect(await crlText(b)).toContain(cert.serial);
  });

  it('the same after a bulk revocation through the other instance', async () => {
    const cert = await issuedCertificate();
    expect(await ocspStatus(a, cert.serial)).toBe('good');
    expect(await crlText(a)).not.toContain(cert.serial);

    const bulk = await call(b, 'POST', '/api/v1/certificates/bulk-revoke', {
      certificate_ids: [cert.id],
      reason: 'superseded',
    });
    expect(bulk.status).toBe(200);

    expect(await ocspStatus(a, cert.serial)).toBe('revoked');
    expect(await crlText(a)).toContain(cert.serial);
  });

  it('freshly signed answers (a nonce each) say revoked through the instance that did not revoke', async () => {
    const cert = await issuedCertificate();
    // Twice: the second answer comes from instance B's status index, not storage.
    expect(await ocspStatusWithNonce(b, cert.serial)).toBe('good');
    expect(await ocspStatusWithNonce(b, cert.serial)).toBe('good');

    const revoke = await call(a, 'POST', `/api/v1/certificates/${cert.id}/revoke`, {
      reason: 'keyCompromise',
    });
    expect(revoke.status).toBe(200);

    expect(await ocspStatusWithNonce(b, cert.serial)).toBe('revoked');
    expect(await ocspStatusWithNonce(a, cert.serial)).toBe('revoked');
  });
});
