import { type KeyObject, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TransportContext } from '@certwright/core';
import {
  attributeValues,
  buildEnvelopedData,
  buildSignedData,
  createCertificationRequest,
  createSelfSignedCertificate,
  der,
  generateKeyPair,
  openEnvelopedData,
  parseCertsOnly,
  parseSignedData,
  pemEncode,
  readCertificate,
  SCEP_OID,
} from '@certwright/core/pki';
import { mintScepChallenge } from '@certwright/protocols/scep';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conformance } from './support/openapi-conformance.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * SCEP enrollment through the composed handler on a profile with device-management
 * challenges: the challengePassword of the CSR is a signed challenge; a refused one is a
 * CertRep FAILURE with failInfo badRequest, counted under its status label, audited, and
 * nothing is issued. Real scepclient runs are in test/interop/scep.test.ts.
 */

let app: TestApp;
let dir: string;
let mdm: { key: KeyObject; der: Buffer };
let raCertificate: Buffer;

const transport: TransportContext = { remoteAddress: '127.0.0.1' };
const AUDIENCE = 'urn:certwright:scep:prof-default';

beforeAll(async () => {
  app = await createTestApp({ handler: { rateLimits: { enrollment: 100_000 } } });
  dir = await mkdtemp(join(tmpdir(), 'cw-scep-mdm-enroll-'));
  const { privateKey } = await generateKeyPair('ECDSA-P256');
  const cert = createSelfSignedCertificate(
    {
      subject: 'CN=enrollment mdm,O=certwright tests',
      notBefore: new Date('2025-06-01T00:00:00Z'),
      notAfter: new Date('2027-06-01T00:00:00Z'),
      keyUsage: ['digitalSignature'],
    },
    privateKey,
  );
  mdm = { key: privateKey, der: cert.der };
  const trustFile = join(dir, 'mdm.pem');
  await writeFile(trustFile, pemEncode('CERTIFICATE', cert.der));
  const put = await app.call('PUT', '/api/v1/profiles/prof-default', {
    scep: { enabled: true, mdm: { enabled: true, trust_bundle_path: trustFile } },
  });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  raCertificate = (await app.servers.scep.scep.caCertificates(null)).ra;
}, 180_000);

afterAll(async () => {
  await app?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const challenge = (cn: string, claims: { dns?: string[]; compliant?: boolean } = {}) =>
  mintScepChallenge({
    key: mdm.key,
    certificate: mdm.der,
    audience: AUDIENCE,
    issuer: 'mdm.test',
    claims: { cn, compliant: true, ...claims },
    now: app.clock.now(),
  });

interface Device {
  key: KeyObject;
  /** The certificate that signs the request: self-signed for PKCSReq, the one renewed for RenewalReq. */
  certificate: Uint8Array;
}

async function newDevice(cn: string): Promise<Device> {
  const { privateKey } = await generateKeyPair('RSA-2048');
  const signer = createSelfSignedCertificate(
    {
      subject: `CN=${cn}`,
      notBefore: new Date('2025-12-01T00:00:00Z'),
      notAfter: new Date('2026-12-01T00:00:00Z'),
    },
    privateKey,
  );
  return { key: privateKey, certificate: signer.der };
}

/** A PKCSReq (or RenewalReq, type 17) as scepclient builds one: RSA key, CSR enveloped to the RA. */
async function pkcsReq(cn: string, challengePassword: string, device?: Device, messageType = '19') {
  const { key: privateKey, certificate } = device ?? (await newDevice(cn));
  const signer = { der: certificate };
  const csr = createCertificationRequest({
    subject: [[{ type: '2.5.4.3', value: cn }]],
    privateKey,
    challengePassword,
  });
  const envelope = buildEnvelopedData({
    content: csr,
    recipient: { certificate: raCertificate },
    contentEncryption: 'aes-256-cbc',
  });
  return buildSignedData({
    content: envelope,
    signer: { certificate: signer.der, privateKey },
    digest: 'sha256',
    signingTime: app.clock.now(),
    signedAttributes: [
      { type: SCEP_OID.messageType, values: [der.printableString(messageType)] },
      { type: SCEP_OID.transactionID, values: [der.printableString(randomBytes(16).toString('hex'))] },
      { type: SCEP_OID.senderNonce, values: [der.octetString(randomBytes(16))] },
    ],
  });
}

/** Sends a PKIMessage; answers the CertRep's pkiStatus and failInfo, and the issued certificate for `device`. */
async function enroll(message: Buffer, device?: Device) {
  const response = await conformance.call(
    app.handler,
    new Request('https://localhost:8443/scep?operation=PKIOperation', {
      method: 'POST',
      headers: { 'content-type': 'application/x-pki-message' },
      body: new Uint8Array(message),
    }),
    transport,
  );
  expect(response.status).toBe(200);
  const rep = parseSignedData(new Uint8Array(await response.arrayBuffer()));
  const attrs = rep.signers[0]!.signedAttributes;
  const text = (type: string) => {
    const value = attributeValues(attrs, type)[0];
    return value ? Buffer.from(value.subarray(2)).toString('latin1') : undefined;
  };
  const result: { pkiStatus?: string; failInfo?: string; certificate?: Uint8Array } = {
    pkiStatus: text(SCEP_OID.pkiStatus),
    failInfo: text(SCEP_OID.failInfo),
  };
  if (device && rep.content) {
    const degenerate = openEnvelopedData(rep.content, {
      privateKey: device.key,
      certificate: device.certificate,
    });
    result.certificate = parseCertsOnly(degenerate)[0];
  }
  return result;
}

const counters = async () => await app.servers.scep.mdm.verifier.counters('prof-default');
const audited = async (action: string) =>
  (await app.services.deps.storage.audit.list({ action, resource_id: 'prof-default', page: 1, perPage: 1 }))
    .total;
const inventory = async (cn: string) =>
  (await app.call('GET', `/api/v1/certificates?search=${encodeURIComponent(cn)}&per_page=10`)).body.total;

describe('SCEP PKCSReq with device-management challenges', () => {
  it('issues for a valid signed challenge, audits scep_pkcsreq_mdm and counts success', async () => {
    const before = await counters();
    const auditsBefore = await audited('scep_pkcsreq_mdm');
    const rep = await enroll(await pkcsReq('mdm-device-1', challenge('mdm-device-1')));
    expect(rep).toEqual({ pkiStatus: '0', failInfo: undefined });
    expect((await counters()).success).toBe(before.success + 1);
    expect(await audited('scep_pkcsreq_mdm')).toBe(auditsBefore + 1);
    expect(await inventory('mdm-device-1')).toBe(1);
  });

  it('refuses a reused challenge with badRequest and issues nothing', async () => {
    const token = challenge('mdm-device-2');
    expect((await enroll(await pkcsReq('mdm-device-2', token))).pkiStatus).toBe('0');
    const before = await counters();
    const issued = await inventory('mdm-device-2');
    expect(await enroll(await pkcsReq('mdm-device-2', token))).toEqual({ pkiStatus: '2', failInfo: '2' });
    expect((await counters()).replay).toBe(before.replay + 1);
    expect(await inventory('mdm-device-2')).toBe(issued);
  });

  it('refuses names the challenge does not name, a static password, and a non-compliant device', async () => {
    const before = await counters();
    expect(await enroll(await pkcsReq('mdm-device-3', challenge('someone-else')))).toEqual({
      pkiStatus: '2',
      failInfo: '2',
    });
    expect(await enroll(await pkcsReq('mdm-device-4', 'a static password'))).toEqual({
      pkiStatus: '2',
      failInfo: '2',
    });
    expect(
      await enroll(await pkcsReq('mdm-device-5', challenge('mdm-device-5', { compliant: false }))),
    ).toEqual({
      pkiStatus: '2',
      failInfo: '2',
    });
    const after = await counters();
    expect(after.claim_mismatch).toBe(before.claim_mismatch + 1);
    expect(after.malformed).toBe(before.malformed + 1);
    expect(after.compliance_failed).toBe(before.compliance_failed + 1);
    expect(await inventory('mdm-device-3')).toBe(0);
  });

  it('refuses an expired challenge, one for another audience and one signed by an untrusted key', async () => {
    const before = await counters();
    const expired = mintScepChallenge({
      key: mdm.key,
      certificate: mdm.der,
      audience: AUDIENCE,
      claims: { cn: 'mdm-device-7', compliant: true },
      lifetimeSeconds: 600,
      now: new Date(app.clock.now().getTime() - 3_600_000),
    });
    const elsewhere = mintScepChallenge({
      key: mdm.key,
      certificate: mdm.der,
      audience: 'urn:certwright:scep:another-profile',
      claims: { cn: 'mdm-device-8', compliant: true },
      now: app.clock.now(),
    });
    const { privateKey } = await generateKeyPair('ECDSA-P256');
    const rogue = createSelfSignedCertificate(
      {
        subject: 'CN=rogue mdm',
        notBefore: new Date('2025-06-01T00:00:00Z'),
        notAfter: new Date('2027-06-01T00:00:00Z'),
        keyUsage: ['digitalSignature'],
      },
      privateKey,
    );
    const forged = mintScepChallenge({
      key: privateKey,
      certificate: rogue.der,
      audience: AUDIENCE,
      claims: { cn: 'mdm-device-9', compliant: true },
      now: app.clock.now(),
    });
    for (const [cn, token] of [
      ['mdm-device-7', expired],
      ['mdm-device-8', elsewhere],
      ['mdm-device-9', forged],
    ] as const) {
      expect(await enroll(await pkcsReq(cn, token)), cn).toEqual({ pkiStatus: '2', failInfo: '2' });
      expect(await inventory(cn)).toBe(0);
    }
    const after = await counters();
    expect(after.expired).toBe(before.expired + 1);
    expect(after.wrong_audience).toBe(before.wrong_audience + 1);
    expect(after.signature_invalid).toBe(before.signature_invalid + 1);
  });

  it('renews with a RenewalReq signed by the issued certificate and a fresh challenge (scep_renewalreq_mdm)', async () => {
    const device = await newDevice('mdm-device-6');
    const first = await enroll(await pkcsReq('mdm-device-6', challenge('mdm-device-6'), device), device);
    expect(first.pkiStatus).toBe('0');
    const renewing: Device = { key: device.key, certificate: first.certificate! };
    const auditsBefore = await audited('scep_renewalreq_mdm');
    const renewed = await enroll(
      await pkcsReq('mdm-device-6', challenge('mdm-device-6'), renewing, '17'),
      renewing,
    );
    expect(renewed.pkiStatus).toBe('0');
    expect(readCertificate(renewed.certificate!).serialNumber).not.toBe(
      readCertificate(first.certificate!).serialNumber,
    );
    expect(await audited('scep_renewalreq_mdm')).toBe(auditsBefore + 1);
    const refused = await enroll(await pkcsReq('mdm-device-6', 'no challenge', renewing, '17'));
    expect(refused).toEqual({ pkiStatus: '2', failInfo: '2' });
  });

  it('shows the mdm member on the admin SCEP profile snapshot', async () => {
    const res = await app.call('GET', '/api/v1/admin/scep/profiles');
    expect(res.status).toBe(200);
    const root = res.body.profiles.find((p: { profile_id: string }) => p.profile_id === 'prof-default');
    expect(root.mdm).toMatchObject({
      trust_anchor_subject: 'CN=enrollment mdm,O=certwright tests',
      trust_anchor_not_after: '2027-06-01T00:00:00.000Z',
      audience: AUDIENCE,
      require_compliance: true,
    });
    expect(root.mdm.counters.success).toBeGreaterThanOrEqual(2);
  });
});
