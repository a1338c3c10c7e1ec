import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCertwrightError } from '../../src/errors.js';
import { tlv } from '../../src/pki/der.js';
import {
  certificationRequestToPem,
  createCertificationRequest,
  generateKeyPair,
  parseCertificationRequest,
} from '../../src/pki/index.js';
import { openssl, workdir } from './openssl.js';

let w: Awaited<ReturnType<typeof workdir>>;
beforeAll(async () => {
  w = await workdir();
});
afterAll(async () => {
  await w.cleanup();
});

const CONFIG = `[req]
prompt = no
distinguished_name = dn
attributes = attrs
req_extensions = ext
[dn]
C = DE
O = Example GmbH
CN = csr.example.test
[attrs]
challengePassword = s3cret-otp
[ext]
subjectAltName = DNS:csr.example.test,DNS:www.csr.example.test,IP:192.0.2.1,IP:2001:db8::7,email:ops@example.test,URI:https://example.test/id
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth,clientAuth
basicConstraints = critical,CA:FALSE
1.3.6.1.5.5.7.1.24 = DER:30:03:02:01:05
1.2.3.4.5.6.7 = DER:05:00
`;

/** Generates a key with openssl and a CSR from CONFIG; returns the DER. */
async function opensslCsr(tag: string, keyArgs: string[]): Promise<Buffer> {
  const cfg = await w.file(`${tag}.cnf`, CONFIG);
  const key = `${w.dir}/${tag}.key`;
  const csr = `${w.dir}/${tag}.csr`;
  expect((await openssl(['genpkey', ...keyArgs, '-out', key])).code).toBe(0);
  const r = await openssl(['req', '-new', '-config', cfg, '-key', key, '-outform', 'DER', '-out', csr]);
  expect(r.stderr).toBe('');
  return readFile(csr);
}

function reasonOf(fn: () => unknown): { code: string; reason: unknown; message: string } {
  try {
    fn();
  } catch (e) {
    if (!isCertwrightError(e)) throw e;
    return { code: e.code, reason: e.reason, message: e.message };
  }
  throw new Error('expected the request to be refused');
}

describe('PKCS#10 parsing of openssl requests', () => {
  const keyTypes: [string, string[], object][] = [
    ['RSA-2048', ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'], { type: 'RSA', bits: 2048 }],
    ['P-256', ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'], { type: 'EC', curve: 'P-256' }],
    ['P-384', ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-384'], { type: 'EC', curve: 'P-384' }],
    ['Ed25519', ['-algorithm', 'ED25519'], { type: 'Ed25519' }],
  ];
  for (const [tag, args, description] of keyTypes) {
    it(`verifies and exposes everything in a ${tag} request`, async () => {
      const der = await opensslCsr(tag, args);
      const csr = parseCertificationRequest(der);
      expect(csr.publicKey).toEqual(description);
      expect(csr.subject.text).toBe('CN=csr.example.test,O=Example GmbH,C=DE');
      expect(csr.challengePassword).toBe('s3cret-otp');
      expect(csr.attributeOids).toEqual(
        expect.arrayContaining(['1.2.840.113549.1.9.7', '1.2.840.113549.1.9.14']),
      );
      expect(csr.subjectAltNames).toEqual([
        { type: 'dns', value: 'csr.example.test' },
        { type: 'dns', value: 'www.csr.example.test' },
        { type: 'ip', value: '192.0.2.1' },
        { type: 'ip', value: '2001:db8::7' },
        { type: 'email', value: 'ops@example.test' },
        { type: 'uri', value: 'https://example.test/id' },
      ]);
      expect(csr.keyUsage).toEqual(['digitalSignature', 'keyEncipherment']);
      expect(csr.extendedKeyUsage).toEqual(['serverAuth', 'clientAuth']);
      expect(csr.basicConstraints).toEqual({ ca: false });
      expect(csr.mustStaple).toBe(true);
      // A non-critical extension we do not know is listed, not refused.
      expect(csr.extensions.find((e) => e.oid === '1.2.3.4.5.6.7')).toMatchObject({ critical: false });
    }, 30_000);
  }

  it('accepts PEM, DER, base64 with CRLF line wrapping (EST) and base64 bytes', async () => {
    const der = await opensslCsr('forms', ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256']);
    const b64 = der.toString('base64');
    const crlf = `${(b64.match(/.{1,64}/g) ?? []).join('\r\n')}\r\n`;
    const inputs = [der, certificationRequestToPem(der), crlf, Buffer.from(crlf, 'latin1'), b64];
    for (const input of inputs)
      expect(parseCertificationRequest(input).subject.text).toBe('CN=csr.example.test,O=Example GmbH,C=DE');
    const wrongLabel = reasonOf(() =>
      parseCertificationRequest('-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n'),
    );
    expect(wrongLabel).toMatchObject({ code: 'bad_request', reason: 'csr_malformed' });
    expect(wrongLabel.message).toMatch(/expected CERTIFICATE REQUEST/);
    const notBase64 = reasonOf(() => parseCertificationRequest('not base64 at all!'));
    expect(notBase64).toMatchObject({ code: 'bad_request', reason: 'csr_malformed' });
    expect(notBase64.message).toMatch(/not valid base64/);
  }, 30_000);

  it('writes requests that openssl req -verify accepts, with the same content read back', async () => {
    for (const alg of ['RSA-2048', 'ECDSA-P384', 'Ed25519'] as const) {
      const { privateKey } = await generateKeyPair(alg);
      const der = createCertificationRequest({
        subject: 'CN=agent.example.test,O=Example',
        privateKey,
        subjectAltNames: [{ type: 'dns', value: 'agent.example.test' }],
        challengePassword: 'otp-123',
      });
      const r = await openssl([
        'req',
        '-verify',
        '-noout',
        '-inform',
        'DER',
        '-in',
        await w.file(`${alg}-ours.csr`, der),
      ]);
      expect(r.stderr).toMatch(/verify OK|Certificate request self-signature verify OK/);
      expect(r.code).toBe(0);
      const csr = parseCertificationRequest(der);
      expect(csr.challengePassword).toBe('otp-123');
      expect(csr.subjectAltNames).toEqual([{ type: 'dns', value: 'agent.example.test' }]);
    }
  }, 30_000);
});

describe('hostile certificate requests are refused with a clear reason', () => {
  let valid: Buffer;
  beforeAll(async () => {
    valid = await opensslCsr('hostile', ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048']);
  }, 30_000);

  it('refuses a wrong signature', () => {
    const tampered = Buffer.from(valid);
    tampered[tampered.length - 1]! ^= 0x01;
    const r = reasonOf(() => parseCertificationRequest(tampered));
    expect(r).toMatchObject({ code: 'bad_request', reason: 'csr_signature_invalid' });
    expect(r.message).toMatch(/proof of possession/);
  });

  it('parses the same array again after it was altered in place, never answering from the first parse', () => {
    const bytes = Buffer.from(valid);
    const first = parseCertificationRequest(bytes);
    expect(parseCertificationRequest(first.der)).toBe(first);
    first.der[first.der.length - 1]! ^= 0x01;
    expect(reasonOf(() => parseCertificationRequest(first.der)).reason).toBe('csr_signature_invalid');
    first.der[first.der.length - 1]! ^= 0x01;
    expect(parseCertificationRequest(first.der).subject).toEqual(first.subject);
  });

  it('refuses a request whose signed content was altered', () => {
    const tampered = Buffer.from(valid);
    const at = tampered.indexOf(Buffer.from('csr.example.test'));
    tampered[at] = 'x'.charCodeAt(0);
    expect(reasonOf(() => parseCertificationRequest(tampered)).reason).toBe('csr_signature_invalid');
  });

  it('refuses truncated DER', () => {
    for (const n of [1, 10, valid.length - 1]) {
      const r = reasonOf(() => parseCertificationRequest(valid.subarray(0, n)));
      expect(r.code).toBe('bad_request');
      expect(r.message).toMatch(/truncated/);
    }
  });

  it('refuses requests over the 64 KiB cap before parsing, in DER and in text form', async () => {
    const { privateKey } = await generateKeyPair('ECDSA-P256');
    const big = createCertificationRequest({
      subject: 'CN=big',
      privateKey,
      subjectAltNames: Array.from({ length: 4000 }, (_, i) => ({
        type: 'dns' as const,
        value: `host-${i}.example.test`,
      })),
    });
    expect(big.length).toBeGreaterThan(64 * 1024);
    expect(reasonOf(() => parseCertificationRequest(big))).toMatchObject({
      code: 'payload_too_large',
      reason: 'too_large',
    });
    expect(reasonOf(() => parseCertificationRequest(big.toString('base64'))).reason).toBe('too_large');
    expect(reasonOf(() => parseCertificationRequest(Buffer.alloc(10 * 1024 * 1024, 0x41))).reason).toBe(
      'too_large',
    );
  });

  it('refuses deeply nested DER and too many ASN.1 values, even when correctly signed', async () => {
    const { privateKey } = await generateKeyPair('ECDSA-P256');
    let nested: Buffer = Buffer.alloc(0);
    for (let i = 0; i < 100; i++) nested = tlv(0x30, nested);
    const deep = createCertificationRequest({
      subject: 'CN=deep',
      privateKey,
      attributes: [{ oid: '1.2.3.4', values: [nested] }],
    });
    expect(reasonOf(() => parseCertificationRequest(deep)).message).toMatch(/nested deeper than 24 levels/);

    const many = createCertificationRequest({
      subject: 'CN=many',
      privateKey,
      attributes: [
        {
          oid: '1.2.3.4',
          values: [tlv(0x30, ...Array.from({ length: 12_000 }, () => Buffer.from([0x05, 0x00])))],
        },
      ],
    });
    expect(many.length).toBeLessThan(64 * 1024);
    expect(reasonOf(() => parseCertificationRequest(many)).message).toMatch(/more than 10000 ASN.1 values/);

    let pure: Buffer = Buffer.alloc(0);
    for (let i = 0; i < 5000; i++) pure = tlv(0x30, pure);
    expect(reasonOf(() => parseCertificationRequest(pure)).message).toMatch(/nested deeper/);
  });

  it('refuses an unknown critical extension but names it', async () => {
    const { privateKey } = await generateKeyPair('ECDSA-P256');
    const der = createCertificationRequest({
      subject: 'CN=crit',
      privateKey,
      extensions: [{ oid: '1.3.6.1.4.1.99999.1', critical: true, value: Buffer.from([0x05, 0x00]) }],
    });
    const r = reasonOf(() => parseCertificationRequest(der));
    expect(r).toMatchObject({ code: 'validation_failed', reason: 'extension_not_allowed' });
    expect(r.message).toContain('1.3.6.1.4.1.99999.1');
  });

  it('refuses BER indefinite lengths and trailing bytes', () => {
    expect(reasonOf(() => parseCertificationRequest(Buffer.from('3080300000000000', 'hex'))).message).toMatch(
      /indefinite/,
    );
    expect(
      reasonOf(() => parseCertificationRequest(Buffer.concat([valid, Buffer.from([0])]))).message,
    ).toMatch(/trailing/);
  });
});
