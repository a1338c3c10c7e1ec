import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { isCertwrightError } from '../../src/errors.js';
import {
  buildCertRep,
  buildScepRequest,
  buildSignedData,
  createCertificationRequest,
  der,
  derReader,
  describeEnvelopedData,
  parseScepRequest,
  parseSignedData,
  readCertRep,
  SCEP_OID,
  verifySignerInfo,
} from '../../src/pki/index.js';
import { cmsFixture, type Party, reasonOf } from './cms/support.js';

/**
 * SCEP messages (RFC 8894 §3): a request written by the client helpers reads back with its
 * attributes; CertReps carry the echoed transaction and nonce, signed attributes in DER order,
 * an AES envelope on SUCCESS and the failInfo on FAILURE; and the request parser, fed mutated
 * real requests (one captured from micromdm scepclient 2.1) and random bytes, throws nothing
 * but typed errors.
 */
const SCEPCLIENT_PKCSREQ = readFileSync(
  new URL('./cms/fixtures/scepclient-2.1-pkcsreq.der', import.meta.url),
);

let ra: Party;
let device: Party;
let csr: Buffer;

beforeAll(async () => {
  const fx = await cmsFixture('scep-messages');
  ra = await fx.party('RSA-2048', 'ra.scep.test');
  device = await fx.party('RSA-2048', 'device.scep.test');
  csr = createCertificationRequest({
    subject: [{ type: 'CN', value: 'device.scep.test' }],
    privateKey: device.key,
  });
});

const request = (overrides: Partial<Parameters<typeof buildScepRequest>[0]> = {}) =>
  buildScepRequest({
    messageType: 'PKCSReq',
    transactionId: 'tx-0001',
    senderNonce: Buffer.alloc(16, 7),
    content: csr,
    signer: { certificate: device.der, privateKey: device.key },
    recipient: ra.der,
    ...overrides,
  });

describe('SCEP requests', () => {
  it('reads back type, transaction, nonce, signer and envelope', () => {
    const parsed = parseScepRequest(request());
    expect(parsed).toMatchObject({ messageType: 'PKCSReq', transactionId: 'tx-0001' });
    expect(Buffer.from(parsed.senderNonce)).toEqual(Buffer.alloc(16, 7));
    expect(Buffer.from(parsed.signerCertificate)).toEqual(device.der);
    expect(verifySignerInfo(parsed.signedData, parsed.signer, parsed.signerCertificate).digest).toBe(
      'sha256',
    );
    expect(describeEnvelopedData(parsed.envelope).contentEncryption).toBe('aes-256-cbc');
  });

  it('reads the PKCSReq micromdm scepclient 2.1 writes', () => {
    const parsed = parseScepRequest(SCEPCLIENT_PKCSREQ);
    expect(parsed.messageType).toBe('PKCSReq');
    expect(parsed.transactionId.length).toBeGreaterThan(0);
    expect(verifySignerInfo(parsed.signedData, parsed.signer, parsed.signerCertificate).digest).toBe('sha1');
  });

  it('refuses what is not a request: no SCEP attributes, a CertRep, a short nonce, no signer certificate', () => {
    const plain = buildSignedData({
      content: Buffer.from('x'),
      signer: { certificate: device.der, privateKey: device.key },
      digest: 'sha256',
    });
    expect(reasonOf(() => parseScepRequest(plain))).toBe('malformed');
    const certRep = buildCertRep({
      ra: { certificate: ra.der, privateKey: ra.key },
      transactionId: 't',
      recipientNonce: Buffer.alloc(16),
      senderNonce: Buffer.alloc(16),
      digest: 'sha256',
      result: { status: 'PENDING' },
    });
    expect(reasonOf(() => parseScepRequest(certRep))).toBe('malformed');
    expect(reasonOf(() => parseScepRequest(request({ senderNonce: Buffer.alloc(8) })))).toBe('malformed');
    expect(reasonOf(() => parseScepRequest(request({ transactionId: 'a'.repeat(200) })))).toBe('malformed');
    const noCert = buildSignedData({
      content: Buffer.from('x'),
      signer: { certificate: device.der, privateKey: device.key },
      digest: 'sha256',
      certificates: [],
      signedAttributes: [
        { type: SCEP_OID.messageType, values: [der.printableString('19')] },
        { type: SCEP_OID.transactionID, values: [der.printableString('t')] },
        { type: SCEP_OID.senderNonce, values: [der.octetString(Buffer.alloc(16))] },
      ],
    });
    expect(reasonOf(() => parseScepRequest(noCert))).toBe('malformed');
    expect(reasonOf(() => parseScepRequest(Buffer.alloc(300 * 1024, 0x30)))).toBe('too_large');
  });

  it('refuses deep nesting (DER and BER) and too many values without exhausting the stack', () => {
    let deep: Buffer = Buffer.from([0x05, 0x00]);
    for (let i = 0; i < 200; i++) deep = der.sequence(deep);
    expect(reasonOf(() => parseScepRequest(deep))).toBe('malformed');
    const indefinite = Buffer.concat([
      Buffer.alloc(100_000 * 2).map((_, i) => (i % 2 === 0 ? 0x30 : 0x80)),
      Buffer.alloc(100_000 * 2),
    ]);
    expect(['malformed', 'too_large']).toContain(reasonOf(() => parseScepRequest(indefinite)));
    const many = der.sequence(...Array.from({ length: 20_000 }, () => Buffer.from([0x05, 0x00])));
    expect(reasonOf(() => parseScepRequest(many))).toBe('malformed');
  });
});

describe('CertRep', () => {
  const base = () => ({
    ra: { certificate: ra.der, privateKey: ra.key },
    transactionId: 'tx-0001',
    recipientNonce: Buffer.alloc(16, 7),
    senderNonce: randomBytes(16),
    digest: 'sha256' as const,
  });

  it('SUCCESS: the certificates in an AES envelope to the requester, signed attributes in DER order', () => {
    const rep = buildCertRep({
      ...base(),
      result: { status: 'SUCCESS', certificates: [device.der], recipient: device.der },
    });
    const read = readCertRep(rep, {
      ra: ra.der,
      requester: { certificate: device.der, privateKey: device.key },
    });
    expect(read).toMatchObject({ status: 'SUCCESS', transactionId: 'tx-0001' });
    expect(Buffer.from(read.recipientNonce)).toEqual(Buffer.alloc(16, 7));
    expect(Buffer.from(read.certificates[0]!)).toEqual(device.der);
    const sd = parseSignedData(rep);
    expect(describeEnvelopedData(sd.content!).contentEncryption).toBe('aes-256-cbc');
    const attrs = sd.signers[0]!.signedAttributesDer!;
    const encoded = derReader
      .children(attrs, derReader.readRoot(attrs))
      .map((n) => Buffer.from(derReader.raw(attrs, n)));
    expect(encoded).toEqual([...encoded].sort(Buffer.compare));
    expect(Buffer.from(sd.certificates[0]!)).toEqual(ra.der);
  });

  it('FAILURE: the failInfo, no content; refuses a CertRep not signed by the RA', () => {
    const rep = buildCertRep({ ...base(), result: { status: 'FAILURE', failInfo: 'badMessageCheck' } });
    const read = readCertRep(rep, {
      ra: ra.der,
      requester: { certificate: device.der, privateKey: device.key },
    });
    expect(read).toMatchObject({ status: 'FAILURE', failInfo: 'badMessageCheck', certificates: [] });
    expect(parseSignedData(rep).content).toBeUndefined();
    expect(
      reasonOf(() =>
        readCertRep(rep, { ra: device.der, requester: { certificate: device.der, privateKey: device.key } }),
      ),
    ).toBe('signature_invalid');
  });
});

// ---------------------------------------------------------------------------------------------

const mutation = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({
    kind: fc.constant('set' as const),
    at: fc.nat(),
    value: fc.constantFrom(0x00, 0x13, 0x80, 0x81, 0x84, 0xff, 0x30, 0xa0, 0x24),
  }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }),
  }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), count: fc.integer({ min: 1, max: 16 }) }),
);
type Mutation = typeof mutation extends fc.Arbitrary<infer T> ? T : never;

function mutate(seed: Uint8Array, ops: Mutation[]): Uint8Array {
  let b = Buffer.from(seed);
  for (const op of ops) {
    if (b.length === 0) break;
    const at = op.at % b.length;
    if (op.kind === 'flip') b[at]! ^= 1 << op.bit;
    else if (op.kind === 'set') b[at] = op.value;
    else if (op.kind === 'truncate') b = b.subarray(0, at);
    else if (op.kind === 'insert') b = Buffer.concat([b.subarray(0, at), op.bytes, b.subarray(at)]);
    else b = Buffer.concat([b.subarray(0, at), b.subarray(at + op.count)]);
  }
  return b;
}

function exercise(input: Uint8Array): void {
  try {
    const parsed = parseScepRequest(input);
    verifySignerInfo(parsed.signedData, parsed.signer, parsed.signerCertificate);
  } catch (error) {
    if (!isCertwrightError(error)) throw error;
  }
  try {
    readCertRep(input, { ra: ra.der, requester: { certificate: device.der, privateKey: device.key } });
  } catch (error) {
    if (!isCertwrightError(error)) throw error;
  }
}

describe('SCEP parser fuzz', () => {
  it('mutated real requests and replies fail only with typed errors', () => {
    const seeds = [
      SCEPCLIENT_PKCSREQ,
      request(),
      request({ messageType: 'RenewalReq', digest: 'sha512' }),
      buildCertRep({
        ra: { certificate: ra.der, privateKey: ra.key },
        transactionId: 'tx',
        recipientNonce: Buffer.alloc(16),
        senderNonce: Buffer.alloc(16),
        digest: 'sha256',
        result: { status: 'SUCCESS', certificates: [device.der], recipient: device.der },
      }),
    ];
    fc.assert(
      fc.property(fc.nat(), fc.array(mutation, { minLength: 1, maxLength: 4 }), (pick, ops) => {
        exercise(mutate(seeds[pick % seeds.length]!, ops));
      }),
      { seed: 0x5cef1, numRuns: 1500 },
    );
  });

  it('random bytes fail only with typed errors', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => exercise(bytes)),
      { seed: 0x5cef2, numRuns: 1000 },
    );
  });
});
