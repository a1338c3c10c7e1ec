import { X509Certificate } from 'node:crypto';
import { ManualClock, SYSTEM_ACTOR } from '@certwright/core';
import {
  buildCertId,
  certificationRequestToPem,
  createCertificationRequest,
  der,
  generateKeyPair,
  OID,
  readCertificate,
} from '@certwright/core/pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLifecycleApp, type LifecycleApp, openssl } from './lifecycle-support.js';

const DAY = 86_400_000;
let app: LifecycleApp;
const clock = new ManualClock('2026-01-01T00:00:00Z');

beforeAll(async () => {
  app = await createLifecycleApp({ clock, pki: { publicBaseUrl: 'https://pki.example.test:8443' } });
});
afterAll(() => app.close());

const chainOf = async (issuerId: string) => {
  const res = await app.call('GET', `/api/v1/issuers/${issuerId}/chain`);
  expect(res.status).toBe(200);
  return (await res.text()).match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g)!;
};

const ocspRequest = (issuerPem: string, serial: string) =>
  der.sequence(
    der.sequence(der.sequence(der.sequence(buildCertId(readCertificate(issuerPem), serial, 'sha256').der))),
  );

async function csrPem(
  algorithm: Parameters<typeof generateKeyPair>[0],
  names: string[] = ['app.example.test'],
) {
  const { privateKey } = await generateKeyPair(algorithm);
  return certificationRequestToPem(
    createCertificationRequest({
      subject: [{ type: 'CN', value: names[0]! }],
      privateKey,
      subjectAltNames: names.map((value) => ({ type: 'dns' as const, value })),
    }),
  );
}

describe('issuance after create', () => {
  it('issues a created certificate through the job worker: Pending → Active, version signed by the local CA', async () => {
    const cert = await app.createCertificate({ profile_id: 'prof-default' });
    expect(cert.status).toBe('Pending');
    expect(await app.services.pki.lifecycle.processDueJobs()).toBeGreaterThanOrEqual(1);

    const got = await app.json('GET', `/api/v1/certificates/${cert.id}`);
    expect(got.body.status).toBe('Active');
    expect(got.body.current_version_id).toMatch(/.+/);
    const jobs = await app.services.jobs.list({ certificate_id: cert.id, type: 'Issuance' });
    expect(jobs.data.map((j) => j.status)).toEqual(['Completed']);

    const pem = await (await app.call('GET', `/api/v1/certificates/${cert.id}/export?format=pem`)).text();
    const [leafPem, issuingPem, rootPem] = pem.match(
      /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g,
    )!;
    const leaf = new X509Certificate(leafPem!);
    const issuing = new X509Certificate(issuingPem!);
    expect(leaf.verify(issuing.publicKey)).toBe(true);
    expect(issuing.verify(new X509Certificate(rootPem!).publicKey)).toBe(true);
    expect(leaf.subjectAltName).toContain('DNS:app.example.test');
    expect(leaf.subjectAltName).toContain('IP Address:127.0.0.7');
    expect(leaf.infoAccess).toContain(`https://pki.example.test:8443/.well-known/pki/ocsp/${app.ids.issuer}`);
    // Profile default: 397 days at most.
    expect(new Date(leaf.validTo).getTime() - clock.now().getTime()).toBeLessThanOrEqual(397 * DAY);

    // The CA chain endpoint serves the same CA; the key never appears anywhere.
    expect(await chainOf(app.ids.issuer)).toEqual([issuingPem, rootPem]);
    const issuer = await app.json('GET', `/api/v1/issuers/${app.ids.issuer}`);
    expect(issuer.status).toBe(200);
    expect(issuer.body.id).toBe(app.ids.issuer);
    expect(Object.keys(issuer.body).sort()).toEqual([
      'created_at',
      'enabled',
      'id',
      'name',
      'type',
      'updated_at',
    ]);
    expect(JSON.stringify(issuer.body)).not.toMatch(/PRIVATE KEY|issuing_key|root_key/);
  });

  it('DER export is the certificate alone; PKCS#12 needs a password and holds key + chain', async () => {
    const cert = await app.createCertificate();
    const issued = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`, {
      key_algorithm: 'RSA-2048',
    });
    expect(issued.status).toBe(200);
    const derRes = await app.call('GET', `/api/v1/certificates/${cert.id}/export?format=der`);
    expect(derRes.headers.get('content-type')).toBe('application/pkix-cert');
    const leaf = new X509Certificate(Buffer.from(await derRes.arrayBuffer()));
    expect(leaf.serialNumber.toLowerCase().replace(/^0+/, '')).toBe(issued.body.version.serial_number);

    expect(
      (await app.json('POST', `/api/v1/certificates/${cert.id}/export`, { format: 'pkcs12' })).status,
    ).toBe(400);
    const short = await app.json('POST', `/api/v1/certificates/${cert.id}/export`, {
      format: 'pkcs12',
      password: 'seven77',
    });
    expect(short.status).toBe(400);
    expect(short.body.errors.map((e: { field: string }) => e.field)).toEqual(['password']);
    const p12 = await app.call('POST', `/api/v1/certificates/${cert.id}/export`, {
      format: 'pkcs12',
      password: 's3cret!!',
    });
    expect(p12.status).toBe(200);
    expect(p12.headers.get('content-type')).toBe('application/x-pkcs12');
    const info = openssl([
      'pkcs12',
      '-info',
      '-nodes',
      '-in',
      { name: 'x.p12', file: Buffer.from(await p12.arrayBuffer()) },
      '-passin',
      'pass:s3cret!!',
    ]);
    expect(info.match(/BEGIN CERTIFICATE/g)).toHaveLength(3);
    expect(info).toContain('BEGIN PRIVATE KEY');
    // 600,000 PBKDF2/MAC rounds, written and read once each: seconds on a loaded machine.
  }, 60_000);
});

describe('CSR issuance against the profile', () => {
  it('issues from a valid CSR and refuses PKCS#12 export (the key is not on the server)', async () => {
    const cert = await app.createCertificate({ profile_id: 'prof-default' });
    const res = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`, {
      csr_pem: await csrPem('ECDSA-P384'),
    });
    expect(res.status).toBe(200);
    expect(res.body.version).toMatchObject({ key_algorithm: 'ECDSA', key_size: 384 });
    const p12 = await app.json('POST', `/api/v1/certificates/${cert.id}/export`, {
      format: 'pkcs12',
      password: 'long-enough',
    });
    expect(p12.status).toBe(409);
  });

  it.each([
    [
      'a tampered signature',
      async () => {
        const pem = await csrPem('ECDSA-P256');
        const bytes = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s/g, ''), 'base64');
        bytes[bytes.length - 5] = bytes[bytes.length - 5]! ^ 0xff;
        return `-----BEGIN CERTIFICATE REQUEST-----\n${bytes.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
      },
      /signature/i,
    ],
    ['a key size the profile does not allow', () => csrPem('RSA-2048').then(() => null), null],
    [
      'a name the certificate does not carry',
      () => csrPem('ECDSA-P256', ['app.example.test', 'evil.example.org']),
      /evil\.example\.org/,
    ],
    [
      'deeply nested DER',
      async () => {
        let nested: Buffer = Buffer.from([0x05, 0x00]);
        for (let i = 0; i < 200; i++) nested = der.sequence(nested);
        return `-----BEGIN CERTIFICATE REQUEST-----\n${nested.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
      },
      /depth|nest/i,
    ],
  ])('refuses %s with a reason and issues nothing', async (_name, make, reason) => {
    const profile = await app.services.profiles.create(SYSTEM_ACTOR, {
      name: `p-${Math.random()}`,
      allow_ip_sans: true, // createCertificate names 127.0.0.7
      allowed_key_algorithms: [{ algorithm: 'ECDSA', curves: ['P-256'] }],
      allowed_ekus: ['serverAuth'],
      max_validity_days: 30,
      key_generation: 'server',
    });
    const cert = await app.createCertificate({ profile_id: profile.id });
    const csr = (await make()) ?? (await csrPem('RSA-2048'));
    const res = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`, { csr_pem: csr });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(reason ?? /RSA-2048 is not allowed/);
    const after = await app.json('GET', `/api/v1/certificates/${cert.id}`);
    expect(after.body).toMatchObject({ status: 'Pending', current_version_id: null });
    expect((await app.services.jobs.list({ certificate_id: cert.id })).total).toBe(0);
  });

  it('names each profile refusal with its typed reason in the problem body', async () => {
    const profile = await app.services.profiles.create(SYSTEM_ACTOR, {
      name: `reasons-${Math.random()}`,
      allow_ip_sans: true, // createCertificate names 127.0.0.7
      allowed_key_algorithms: [{ algorithm: 'ECDSA', curves: ['P-256'] }],
      allowed_ekus: ['serverAuth'],
      required_csr_attributes: ['challengePassword'],
      max_validity_days: 30,
      key_generation: 'server',
    });
    const cert = await app.createCertificate({ profile_id: profile.id });
    const csrWith = async (extra: Partial<Parameters<typeof createCertificationRequest>[0]> = {}) => {
      const { privateKey } = await generateKeyPair('ECDSA-P256');
      return certificationRequestToPem(
        createCertificationRequest({
          subject: [{ type: 'CN', value: 'app.example.test' }],
          privateKey,
          subjectAltNames: [{ type: 'dns', value: 'app.example.test' }],
          challengePassword: 'pw',
          ...extra,
        }),
      );
    };
    const refusal = async (body: Record<string, unknown>) => {
      const res = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`, body);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error).toBe('validation_failed');
      return res.body.reason as string;
    };
    expect(await refusal({ key_algorithm: 'RSA-2048' })).toBe('key_not_allowed');
    expect(await refusal({ csr_pem: await csrPem('RSA-2048') })).toBe('key_not_allowed');
    expect(await refusal({ validity_days: 31 })).toBe('validity_not_allowed');
    expect(
      await refusal({
        csr_pem: await csrWith({
          subjectAltNames: [
            { type: 'dns', value: 'app.example.test' },
            { type: 'dns', value: 'evil.example.org' },
          ],
        }),
      }),
    ).toBe('names_mismatch');
    expect(
      await refusal({
        csr_pem: await csrWith({
          extensions: [{ oid: OID.basicConstraints, critical: true, value: der.sequence(der.boolean(true)) }],
        }),
      }),
    ).toBe('eku_not_allowed');
    expect(
      await refusal({
        csr_pem: await csrWith({
          extensions: [
            { oid: OID.extKeyUsage, critical: false, value: der.sequence(der.oid(OID.idKpCodeSigning)) },
          ],
        }),
      }),
    ).toBe('eku_not_allowed');
    expect(
      await refusal({
        csr_pem: certificationRequestToPem(
          createCertificationRequest({
            subject: [{ type: 'CN', value: 'app.example.test' }],
            privateKey: (await generateKeyPair('ECDSA-P256')).privateKey,
            subjectAltNames: [{ type: 'dns', value: 'app.example.test' }],
          }),
        ),
      }),
    ).toBe('csr_attribute_missing');
    // A request that passes every rule is issued: the refusals above were about what they name.
    const ok = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`, { csr_pem: await csrWith() });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it('refuses a validity beyond the profile maximum', async () => {
    const cert = await app.createCertificate({ profile_id: 'prof-default' });
    const res = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`, { validity_days: 398 });
    expect(res.status).toBe(400);
    expect(res.body.detail).toContain('397');
  });

  it('refuses issuer types without a connector with a clear error, before any job exists', async () => {
    const stepCa = await app.services.issuers.create(SYSTEM_ACTOR, { name: 'Some step-ca', type: 'StepCA' });
    const cert = await app.createCertificate({ issuer_id: stepCa.id });
    const res = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`);
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/type StepCA.*cannot issue/);
    expect((await app.services.jobs.list({ certificate_id: cert.id })).total).toBe(0);
  });

  it('refuses to mint a new CA for an issuer whose CA material was wiped after it issued', async () => {
    const issuer = await app.services.issuers.create(SYSTEM_ACTOR, {
      name: `wiped-${Math.random()}`,
      type: 'Local',
    });
    const cert = await app.createCertificate({ issuer_id: issuer.id });
    expect((await app.json('POST', `/api/v1/certificates/${cert.id}/issue`)).status).toBe(200);
    // Below the service (an issuer update keeps CA material): e.g. a config restored from an
    // old backup.
    await app.storage.issuers.update(issuer.id, { config: {} });
    app.services.pki.lifecycle.connectors.invalidate(issuer.id);
    const res = await app.json('POST', `/api/v1/certificates/${cert.id}/renew`);
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/CA material is missing/);
  });

  it('recovers a wiped CA through an explicit import of the CA that issued its certificates, and only that CA', async () => {
    const issuer = await app.services.issuers.create(SYSTEM_ACTOR, {
      name: `recovered-${Math.random()}`,
      type: 'Local',
    });
    const cert = await app.createCertificate({ issuer_id: issuer.id });
    const first = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`);
    expect(first.status).toBe(200);
    const chainBefore = await chainOf(issuer.id);
    // The operator's copy of the CA: here read from the config before it is lost.
    const { ca } = (await app.storage.issuers.getWithConfig(issuer.id))!.config as {
      ca: { issuing_key_pem: string };
    };
    // Another CA, with its own key, to try importing instead.
    const other = await app.services.issuers.create(SYSTEM_ACTOR, {
      name: `other-${Math.random()}`,
      type: 'Local',
    });
    const otherChain = await chainOf(other.id);
    const otherKey = (
      (await app.storage.issuers.getWithConfig(other.id))!.config as { ca: { issuing_key_pem: string } }
    ).ca.issuing_key_pem;

    await app.storage.issuers.update(issuer.id, { config: {} });
    app.services.pki.lifecycle.connectors.invalidate(issuer.id);
    // Minting a new CA stays refused.
    expect((await app.json('POST', `/api/v1/certificates/${cert.id}/renew`)).status).toBe(409);

    // The other CA did not issue this issuer's certificates: 409 saying so, nothing stored.
    const wrong = await app.json('PUT', `/api/v1/issuers/${issuer.id}`, {
      config: { certificate_pem: otherChain[0], private_key_pem: otherKey, chain_pem: otherChain[1] },
    });
    expect(wrong.status).toBe(409);
    expect(wrong.body.detail).toMatch(
      /not the CA that issued this issuer's certificates.*not signed by the key/,
    );
    expect(wrong.body.detail).toContain(first.body.version.serial_number);
    expect(JSON.stringify(wrong.body)).not.toMatch(/PRIVATE KEY/);
    expect((await app.storage.issuers.getWithConfig(issuer.id))!.config).toEqual({});
    expect((await app.json('POST', `/api/v1/certificates/${cert.id}/renew`)).status).toBe(409);
    // The connector checks too, for material written below the service.
    await app.storage.issuers.update(issuer.id, {
      config: { certificate_pem: otherChain[0], private_key_pem: otherKey },
    });
    app.services.pki.lifecycle.connectors.invalidate(issuer.id);
    const below = await app.json('POST', `/api/v1/certificates/${cert.id}/renew`);
    expect(below.status).toBe(409);
    expect(below.body.detail).toMatch(/not the CA that issued/);

    const imported = await app.json('PUT', `/api/v1/issuers/${issuer.id}`, {
      config: {
        certificate_pem: chainBefore[0],
        private_key_pem: ca.issuing_key_pem,
        chain_pem: chainBefore[1],
      },
    });
    expect(imported.status).toBe(200);
    const renewed = await app.json('POST', `/api/v1/certificates/${cert.id}/renew`);
    expect(renewed.status).toBe(200);
    expect(await chainOf(issuer.id)).toEqual(chainBefore);
    // The imported key moved under `ca`; no PEM setting is left lying in the config.
    const config = (await app.storage.issuers.getWithConfig(issuer.id))!.config;
    expect(Object.keys(config)).toEqual(['ca']);

    // CRL and OCSP answer again, for the certificate issued before the loss too.
    const firstSerial = first.body.version.serial_number as string;
    expect(
      (await app.json('POST', `/api/v1/certificates/${cert.id}/revoke`, { reason: 'superseded' })).status,
    ).toBe(200);
    const res = await app.handler(
      new Request(`https://x/.well-known/pki/ocsp/${issuer.id}`, {
        method: 'POST',
        body: new Uint8Array(ocspRequest(chainBefore[0]!, firstSerial)),
      }),
      { remoteAddress: '127.0.0.1' },
    );
    const text = openssl([
      'ocsp',
      '-respin',
      { name: 'r.der', file: Buffer.from(await res.arrayBuffer()) },
      '-resp_text',
      '-CAfile',
      { name: 'ca.pem', file: chainBefore.join('') },
      '-attime',
      String(Math.floor(clock.now().getTime() / 1000)),
    ]);
    expect(text).toContain('Cert Status: revoked');
    const crl = Buffer.from(await (await app.call('GET', `/.well-known/pki/crl/${issuer.id}`)).arrayBuffer());
    const crlText = openssl([
      'crl',
      '-inform',
      'DER',
      '-noout',
      '-text',
      '-CAfile',
      { name: 'ca.pem', file: chainBefore[0]! },
      '-in',
      { name: 'c.crl', file: crl },
    ]);
    expect(crlText.toLowerCase()).toContain(firstSerial);
    expect(crlText.toLowerCase()).toContain(renewed.body.version.serial_number);
  });

  it('refuses creation-time settings on a Local issuer that already has its CA, with a 400 naming the field', async () => {
    const issuer = await app.services.issuers.create(SYSTEM_ACTOR, {
      name: `settled-${Math.random()}`,
      type: 'Local',
      config: { common_name: 'Settled' },
    });
    const [issuingPem] = await chainOf(issuer.id); // first use generates the CA
    const before = (await app.storage.issuers.getWithConfig(issuer.id))!.config;
    const key = (before.ca as { issuing_key_pem: string }).issuing_key_pem;
    for (const [config, fields] of [
      [{ key_algorithm: 'RSA-2048' }, ['config.key_algorithm']],
      [{ common_name: 'Renamed CA' }, ['config.common_name']],
      [
        { certificate_pem: issuingPem, private_key_pem: key },
        ['config.certificate_pem', 'config.private_key_pem'],
      ],
    ] as const) {
      const res = await app.json('PUT', `/api/v1/issuers/${issuer.id}`, { name: 'not applied', config });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/only apply|only applies/);
      expect(res.body.detail).toMatch(/when the issuer's CA is created/);
      expect(JSON.stringify(res.body)).not.toMatch(/PRIVATE KEY|BEGIN CERTIFICATE/);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(fields);
    }
    expect((await app.storage.issuers.getWithConfig(issuer.id))!.config).toEqual(before);
    const unchanged = await app.json('GET', `/api/v1/issuers/${issuer.id}`);
    expect(unchanged.status).toBe(200);
    expect(unchanged.body).toMatchObject({ id: issuer.id, name: issuer.name, type: 'Local' });

    // Other updates still apply; re-sending the value the CA was created with changes nothing.
    const ok = await app.json('PUT', `/api/v1/issuers/${issuer.id}`, {
      name: `settled-renamed-${Math.random()}`,
      enabled: false,
      config: { common_name: 'Settled', base_url: 'https://pki2.example.test' },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.enabled).toBe(false);
    expect((await app.storage.issuers.getWithConfig(issuer.id))!.config).toMatchObject({
      common_name: 'Settled',
      base_url: 'https://pki2.example.test',
      ca: before.ca,
    });

    // Before the CA exists, they are ordinary settings and shape the CA created on first use.
    const fresh = await app.services.issuers.create(SYSTEM_ACTOR, {
      name: `fresh-${Math.random()}`,
      type: 'Local',
    });
    const set = await app.json('PUT', `/api/v1/issuers/${fresh.id}`, {
      config: { key_algorithm: 'ECDSA-P384', common_name: 'Fresh' },
    });
    expect(set.status).toBe(200);
    const [freshIssuing] = await chainOf(fresh.id);
    const x509 = new X509Certificate(freshIssuing!);
    expect(x509.subject).toContain('CN=Fresh Issuing CA');
    expect(x509.publicKey.asymmetricKeyDetails?.namedCurve).toBe('secp384r1');
  });

  it("keeps a Local issuer's CA material, OCSP responder and CRL number across an update of its name and settings", async () => {
    const issuer = await app.services.issuers.create(SYSTEM_ACTOR, {
      name: `updated-${Math.random()}`,
      type: 'Local',
      config: { common_name: 'Before' },
    });
    const cert = await app.createCertificate({ issuer_id: issuer.id });
    expect((await app.json('POST', `/api/v1/certificates/${cert.id}/issue`)).status).toBe(200);
    const chainBefore = await chainOf(issuer.id);
    // Make the service write its other state too: the CRL number and the OCSP responder.
    expect((await app.call('GET', `/.well-known/pki/crl/${issuer.id}`)).status).toBe(200);
    const serial = (await app.json('GET', `/api/v1/certificates/${cert.id}/versions`)).body.data[0]
      .serial_number;
    const signed = await app.call('GET', `/.well-known/pki/ocsp/${issuer.id}/serial/${serial}`, undefined, {
      accept: 'application/ocsp-response',
    });
    expect(signed.headers.get('content-type')).toBe('application/ocsp-response');
    const before = (await app.storage.issuers.getWithConfig(issuer.id))!.config;
    expect(Object.keys(before)).toEqual(expect.arrayContaining(['ca', 'crl_number', 'ocsp_responder']));

    const renamed = await app.json('PUT', `/api/v1/issuers/${issuer.id}`, {
      name: `renamed-${Math.random()}`,
      config: { base_url: 'https://pki2.example.test' },
    });
    expect(renamed.status).toBe(200);
    expect(JSON.stringify(renamed.body)).not.toMatch(/config|PRIVATE KEY|issuing_key|crl_number/);
    const after = (await app.storage.issuers.getWithConfig(issuer.id))!.config;
    // The caller's settings were replaced (common_name is gone), the managed state was kept.
    expect(after).toEqual({
      base_url: 'https://pki2.example.test',
      ca: before.ca,
      crl_number: before.crl_number,
      ocsp_responder: before.ocsp_responder,
    });

    // A fresh connector (as another instance would build) still signs with the same CA.
    app.services.pki.lifecycle.connectors.invalidate(issuer.id);
    const renewed = await app.json('POST', `/api/v1/certificates/${cert.id}/renew`);
    expect(renewed.status).toBe(200);
    expect(await chainOf(issuer.id)).toEqual(chainBefore);
  });

  it('refuses managed config keys as input with a 400 naming the key, on create and update', async () => {
    const created = await app.json('POST', '/api/v1/issuers', {
      name: `forged-${Math.random()}`,
      type: 'Local',
      config: { ca: { issuing_cert_pem: 'x', issuing_key_pem: 'y', upper_chain_pem: '' } },
    });
    expect(created.status).toBe(400);
    expect(created.body.errors).toEqual([{ field: 'config.ca', message: expect.any(String) }]);
    const updated = await app.json('PUT', `/api/v1/issuers/${app.ids.issuer}`, {
      config: { crl_number: '1' },
    });
    expect(updated.status).toBe(400);
    expect(updated.body.errors[0].field).toBe('config.crl_number');
  });

  it('waits in AwaitingCSR when the profile generates keys on the agent', async () => {
    const profile = await app.services.profiles.create(SYSTEM_ACTOR, {
      name: 'agent keys',
      allow_ip_sans: true, // createCertificate names 127.0.0.7
      allowed_key_algorithms: [],
      allowed_ekus: ['serverAuth'],
      max_validity_days: 90,
      key_generation: 'agent',
    });
    const cert = await app.createCertificate({ profile_id: profile.id });
    const res = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`);
    expect(res.status).toBe(202);
    expect(res.body.job).toMatchObject({ type: 'Issuance', status: 'AwaitingCSR' });
    expect(res.body.version).toBeUndefined();
  });
});

describe('agent-side key generation', () => {
  it('issues from the CSR the agent submits for its AwaitingCSR job, through the job worker', async () => {
    const profile = await app.services.profiles.create(SYSTEM_ACTOR, {
      name: `agent-flow-${Math.random()}`,
      allow_ip_sans: true, // createCertificate names 127.0.0.7
      allowed_key_algorithms: [],
      allowed_ekus: ['serverAuth'],
      max_validity_days: 60,
      key_generation: 'agent',
    });
    const { agent } = await app.services.agents.register(SYSTEM_ACTOR, {
      name: `agent-${Math.random()}`,
      hostname: 'web-1',
    });
    const target = await app.services.targets.create(SYSTEM_ACTOR, {
      agent_id: agent.id,
      name: `nginx-${Math.random()}`,
      type: 'NGINX',
    });
    const cert = await app.createCertificate({ profile_id: profile.id });
    await app.storage.certificates.setTargets(cert.id, [target.id]);

    await app.services.pki.lifecycle.processDueJobs();
    const [job] = (await app.services.jobs.list({ certificate_id: cert.id, type: 'Issuance' })).data;
    expect(job).toMatchObject({ status: 'AwaitingCSR', agent_id: agent.id });
    await app.services.jobs.submitCsr(agent.id, job!.id, await csrPem('ECDSA-P256'));
    await app.services.pki.lifecycle.processDueJobs();

    const after = await app.json('GET', `/api/v1/certificates/${cert.id}`);
    expect(after.body.status).toBe('Active');
    expect((await app.services.jobs.get(job!.id)).status).toBe('Completed');
    // The new version fans out to the bound target: one Deployment job for the agent.
    const deployments = await app.services.jobs.list({ certificate_id: cert.id, type: 'Deployment' });
    expect(deployments.data).toHaveLength(1);
    expect(deployments.data[0]).toMatchObject({ agent_id: agent.id, target_id: target.id });
  });
});

describe('renew, revoke, CRL and OCSP', () => {
  it('renews with a new serial and publishes a revocation in CRL and OCSP before revoke returns', async () => {
    const cert = await app.createCertificate();
    const first = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`);
    const renewed = await app.json('POST', `/api/v1/certificates/${cert.id}/renew`);
    expect(renewed.status).toBe(200);
    expect(renewed.body.version.serial_number).not.toBe(first.body.version.serial_number);
    expect(renewed.body.certificate.last_renewal_at).not.toBeNull();
    expect(renewed.body.job).toMatchObject({ type: 'Renewal', status: 'Completed' });
    const notes = await app.services.notifications.list({ certificate_id: cert.id, type: 'RenewalSuccess' });
    expect(notes.total).toBe(1);

    const [issuingPem] = await chainOf(app.ids.issuer);
    const crlBefore = Buffer.from(
      await (await app.call('GET', `/.well-known/pki/crl/${app.ids.issuer}`)).arrayBuffer(),
    );
    const serial = renewed.body.version.serial_number as string;

    const revoke = await app.json('POST', `/api/v1/certificates/${cert.id}/revoke`, {
      reason: 'keyCompromise',
    });
    expect(revoke.status).toBe(200);
    expect(revoke.body.status).toBe('Revoked');

    // No request without authentication to the public endpoints.
    const crlRes = await app.handler(new Request(`https://x/.well-known/pki/crl/${app.ids.issuer}`), {
      remoteAddress: '127.0.0.1',
    });
    expect(crlRes.status).toBe(200);
    expect(crlRes.headers.get('content-type')).toBe('application/pkix-crl');
    const crl = Buffer.from(await crlRes.arrayBuffer());
    const text = openssl(['crl', '-inform', 'DER', '-noout', '-text', '-in', { name: 'c.crl', file: crl }]);
    expect(text.toLowerCase()).toContain(serial.toUpperCase().toLowerCase());
    expect(text).toContain('Key Compromise');
    expect(text).toMatch(/X509v3 Authority Key Identifier/);
    const number = (t: string) => BigInt(`0x${t.match(/X509v3 CRL Number:\s*\n\s*([0-9A-F]+)/)![1]}`);
    const before = openssl([
      'crl',
      '-inform',
      'DER',
      '-noout',
      '-text',
      '-in',
      { name: 'b.crl', file: crlBefore },
    ]);
    expect(number(text)).toBeGreaterThan(number(before));
    // Both versions are revoked: the first serial is listed too.
    expect(text.toLowerCase()).toContain(first.body.version.serial_number);

    const pemRes = await app.call('GET', `/.well-known/pki/crl/${app.ids.issuer}`, undefined, {
      accept: 'application/x-pem-file',
    });
    expect(await pemRes.text()).toMatch(/^-----BEGIN X509 CRL-----/);

    const ocsp = await app.call('POST', `/.well-known/pki/ocsp/${app.ids.issuer}`, undefined, {});
    expect(ocsp.status).toBe(400); // empty body
    const res = await app.handler(
      new Request(`https://x/.well-known/pki/ocsp/${app.ids.issuer}`, {
        method: 'POST',
        body: new Uint8Array(ocspRequest(issuingPem!, serial)),
      }),
      { remoteAddress: '127.0.0.1' },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/ocsp-response');
    const parsed = openssl([
      'ocsp',
      '-respin',
      { name: 'r.der', file: Buffer.from(await res.arrayBuffer()) },
      '-resp_text',
      '-noverify',
    ]);
    expect(parsed).toContain('Cert Status: revoked');
    expect(parsed).toContain('Revocation Reason: keyCompromise');

    const human = await app.json('GET', `/.well-known/pki/ocsp/${app.ids.issuer}/serial/${serial}`);
    expect(human.body).toMatchObject({ status: 'revoked', reason: 'keyCompromise', serial });
  });

  it('raises one Revocation email to the owner per single revoke, and one per owner per bulk call with the count', async () => {
    const notes = async (query: string) =>
      (await app.json('GET', `/api/v1/notifications?type=Revocation&${query}`)).body;
    const single = await app.createCertificate();
    expect((await app.json('POST', `/api/v1/certificates/${single.id}/issue`)).status).toBe(200);
    expect(
      (await app.json('POST', `/api/v1/certificates/${single.id}/revoke`, { reason: 'superseded' })).status,
    ).toBe(200);
    const one = await notes(`certificate_id=${single.id}`);
    expect(one.total).toBe(1);
    expect(one.data[0]).toMatchObject({
      channel: 'email',
      recipient: 'pki@example.test',
      status: 'undeliverable',
    }); // this app has no e-mail channel
    expect(one.data[0].message).toContain('superseded');
    // A refused second revoke (409) raises nothing.
    expect((await app.json('POST', `/api/v1/certificates/${single.id}/revoke`, {})).status).toBe(409);
    expect((await notes(`certificate_id=${single.id}`)).total).toBe(1);

    const other = await app.services.owners.create(SYSTEM_ACTOR, {
      name: 'Other owner',
      email: 'other@example.test',
    });
    const mine = [await app.createCertificate(), await app.createCertificate()];
    const theirs = await app.createCertificate({ owner_id: other.id });
    const seen = new Set((await notes('per_page=500')).data.map((n: { id: string }) => n.id));
    const bulk = await app.json('POST', '/api/v1/certificates/bulk-revoke', {
      certificate_ids: [...mine.map((c) => c.id), theirs.id],
      reason: 'cessationOfOperation',
    });
    expect(bulk.status).toBe(200);
    expect(bulk.body.total_revoked).toBe(3);
    // The clock stands still, so pick the new events by id rather than by order.
    const raised = (await notes('per_page=500')).data.filter((n: { id: string }) => !seen.has(n.id));
    expect(raised).toHaveLength(2);
    const toMe = raised.find((n: { recipient: string }) => n.recipient === 'pki@example.test');
    const toThem = raised.find((n: { recipient: string }) => n.recipient === 'other@example.test');
    expect(toMe).toMatchObject({ certificate_id: null, subject: '2 certificates revoked' });
    for (const c of mine) expect(toMe.message).toContain(c.id);
    expect(toMe.message).toContain('cessationOfOperation');
    expect(toThem).toMatchObject({ certificate_id: theirs.id });
  });

  it('refreshes CRL and OCSP after a bulk revocation through the listener', async () => {
    const cert = await app.createCertificate({ environment: 'bulk-env' });
    const issued = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`);
    const serial = issued.body.version.serial_number as string;
    const status = async () =>
      (await app.json('GET', `/.well-known/pki/ocsp/${app.ids.issuer}/serial/${serial}`)).body.status;
    expect(await status()).toBe('good');
    // Warm the OCSP answer cache with a `good` answer first.
    const [issuingPem] = await chainOf(app.ids.issuer);
    const get = async () => {
      const b64 = encodeURIComponent(Buffer.from(ocspRequest(issuingPem!, serial)).toString('base64'));
      const r = await app.call('GET', `/.well-known/pki/ocsp/${app.ids.issuer}/${b64}`);
      return openssl([
        'ocsp',
        '-respin',
        { name: 'r.der', file: Buffer.from(await r.arrayBuffer()) },
        '-resp_text',
        '-noverify',
      ]);
    };
    expect(await get()).toContain('Cert Status: good');
    await app.services.revocation.revokeCertificates([cert.id], 'superseded', SYSTEM_ACTOR);
    expect(await get()).toContain('Cert Status: revoked');
    expect(await status()).toBe('revoked');
  });

  it('answers unknown for serials it never issued and 404 for unknown issuers', async () => {
    const [issuingPem] = await chainOf(app.ids.issuer);
    const res = await app.handler(
      new Request(`https://x/.well-known/pki/ocsp/${app.ids.issuer}`, {
        method: 'POST',
        headers: { 'content-type': 'application/ocsp-request' },
        body: new Uint8Array(ocspRequest(issuingPem!, '0badc0de')),
      }),
      { remoteAddress: '127.0.0.1' },
    );
    const parsed = openssl([
      'ocsp',
      '-respin',
      { name: 'r.der', file: Buffer.from(await res.arrayBuffer()) },
      '-resp_text',
      '-noverify',
    ]);
    expect(parsed).toContain('Cert Status: unknown');
    expect((await app.call('GET', '/.well-known/pki/crl/iss-nope')).status).toBe(404);
    expect((await app.call('POST', '/.well-known/pki/ocsp/iss-nope', undefined, {})).status).toBe(400);
    const wrongType = await app.call('POST', `/.well-known/pki/ocsp/${app.ids.issuer}`, { a: 1 });
    expect(wrongType.status).toBe(415);
  });
});

describe('delegated OCSP responder', () => {
  it('is re-issued automatically before it expires, and answers keep verifying', async () => {
    const id = app.ids.issuer;
    const serial = '1234';
    const fetchSigned = async () => {
      const res = await app.call('GET', `/.well-known/pki/ocsp/${id}/serial/${serial}`, undefined, {
        accept: 'application/ocsp-response',
      });
      return Buffer.from(await res.arrayBuffer());
    };
    await fetchSigned();
    const responderPem = async () =>
      ((await app.storage.issuers.getWithConfig(id))!.config.ocsp_responder as { cert_pem: string }).cert_pem;
    const before = await responderPem();
    expect(new X509Certificate(before).keyUsage).toContain('1.3.6.1.5.5.7.3.9'); // id-kp-OCSPSigning
    const start = clock.now().getTime();
    try {
      clock.set(new Date(start + 6 * DAY)); // inside the last two days of the 7-day responder
      const answer = await fetchSigned();
      const after = await responderPem();
      expect(after).not.toBe(before);
      expect(new Date(new X509Certificate(after).validTo).getTime()).toBeGreaterThan(start + 12 * DAY);
      const [issuingPem, rootPem] = await chainOf(id);
      const text = openssl([
        'ocsp',
        '-respin',
        { name: 'r.der', file: answer },
        '-resp_text',
        '-CAfile',
        { name: 'ca.pem', file: issuingPem! + rootPem! },
        '-attime',
        String(Math.floor(clock.now().getTime() / 1000)),
      ]);
      // The answer carries (and is signed by) the new responder certificate.
      const body = (pem: string) => pem.replace(/-----[^-]+-----|\s/g, '');
      expect(text.replace(/\s/g, '')).toContain(body(after));
    } finally {
      clock.set(new Date(start));
    }
  });
});

describe('renewal scan', () => {
  it('renews certificates whose window opened and raises each alert threshold once', async () => {
    const policy = await app.services.renewalPolicies.create(SYSTEM_ACTOR, {
      name: `scan-${Math.random()}`,
      renewal_window_days: 5,
      max_retries: 1,
      retry_interval_seconds: 60,
      alert_thresholds_days: [20, 10, 0],
    });
    const cert = await app.createCertificate({ renewal_policy_id: policy.id });
    const issued = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`, { validity_days: 30 });
    const firstSerial = issued.body.version.serial_number;
    const renewal = app.services.pki.renewal;
    const warnings = async () =>
      (
        await app.services.notifications.list({
          certificate_id: cert.id,
          type: 'ExpirationWarning',
          per_page: 100,
        })
      ).data;

    const start = clock.now().getTime();
    try {
      clock.set(new Date(start + 9 * DAY)); // 21 days left: nothing yet
      await renewal.runRenewalScan();
      expect(await warnings()).toHaveLength(0);
      clock.set(new Date(start + 11 * DAY)); // 19 left: the 20-day threshold
      await renewal.runRenewalScan();
      await renewal.runRenewalScan();
      expect((await warnings()).map((n) => n.message.match(/Alert threshold: (\d+)/)![1])).toEqual(['20']);
      clock.set(new Date(start + 21 * DAY)); // 9 left: 10-day threshold, once
      await renewal.runRenewalScan();
      await renewal.runRenewalScan();
      expect(await warnings()).toHaveLength(2);
      expect((await app.json('GET', `/api/v1/certificates/${cert.id}`)).body.status).toBe('Active');

      clock.set(new Date(start + 26 * DAY)); // 4 left: the 5-day renewal window is open
      const report = await renewal.runRenewalScan();
      expect(report.renewal_jobs).toBeGreaterThanOrEqual(1); // other tests' certificates share the database
      const after = await app.json('GET', `/api/v1/certificates/${cert.id}`);
      expect(after.body.status).toBe('Active');
      const latest = await app.services.certificates.keyData(cert.id);
      expect(latest.serial_number).not.toBe(firstSerial);
      const jobs = await app.services.jobs.list({ certificate_id: cert.id, type: 'Renewal' });
      expect(jobs.data.map((j) => j.status)).toEqual(['Completed']);
      // The renewed certificate is far from its thresholds: no new warning; the scan is idempotent.
      await renewal.runRenewalScan();
      expect((await app.services.jobs.list({ certificate_id: cert.id, type: 'Renewal' })).total).toBe(1);
      expect(await warnings()).toHaveLength(2);
    } finally {
      clock.set(new Date(start));
    }
  });

  it('opens AwaitingCSR renewal jobs for agent-keyed certificates', async () => {
    const policy = await app.services.renewalPolicies.create(SYSTEM_ACTOR, {
      name: `agent-${Math.random()}`,
      renewal_window_days: 30,
      alert_thresholds_days: [],
    });
    const profile = await app.services.profiles.create(SYSTEM_ACTOR, {
      name: `agent-scan-${Math.random()}`,
      allow_ip_sans: true, // createCertificate names 127.0.0.7
      allowed_key_algorithms: [],
      allowed_ekus: ['serverAuth'],
      max_validity_days: 20,
      key_generation: 'agent',
    });
    const cert = await app.createCertificate({ renewal_policy_id: policy.id, profile_id: profile.id });
    const issued = await app.json('POST', `/api/v1/certificates/${cert.id}/issue`, {
      csr_pem: await csrPem('ECDSA-P256'),
    });
    expect(issued.status).toBe(200);
    const report = await app.services.pki.renewal.runRenewalScan();
    expect(report).toMatchObject({ renewal_jobs: 1, awaiting_csr: 1 });
    const jobs = await app.services.jobs.list({ certificate_id: cert.id, type: 'Renewal' });
    expect(jobs.data[0]?.status).toBe('AwaitingCSR');
    expect((await app.json('GET', `/api/v1/certificates/${cert.id}`)).body.status).toBe('RenewalInProgress');
  });
});
