import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  attributeValues,
  buildCertsOnly,
  buildSignedData,
  CMS_OID,
  type CmsDigest,
  der,
  describeEnvelopedData,
  parseCertsOnly,
  parseSignedData,
  verifySignerInfo,
} from '../../../src/pki/index.js';
import { openssl, workdir } from '../openssl.js';
import { type CmsFixture, cmsFixture, type Party, reasonOf } from './support.js';

let w: Awaited<ReturnType<typeof workdir>>;
let fx: CmsFixture;
const parties: Record<string, Party> = {};
const CONTENT = Buffer.from('signed content\n');
const TRANSACTION_ID = '2.16.840.1.113733.1.9.7';
const MESSAGE_TYPE = '2.16.840.1.113733.1.9.2';
const SENDER_NONCE = '2.16.840.1.113733.1.9.5';

beforeAll(async () => {
  w = await workdir();
  fx = await cmsFixture('cms-sig');
  for (const alg of ['RSA-2048', 'ECDSA-P256', 'ECDSA-P384', 'Ed25519'] as const) {
    const p = await fx.party(alg, `signer-${alg}.example.test`);
    parties[alg] = p;
    await w.file(`${alg}.pem`, p.certPem);
    await w.file(`${alg}.key`, p.keyPem);
  }
  await w.file('ca.pem', fx.caBundlePem);
  await w.file('content.bin', CONTENT);
});
afterAll(async () => {
  await w.cleanup();
});

const scepAttributes = [
  { type: TRANSACTION_ID, values: [der.printableString('abc123')] },
  { type: MESSAGE_TYPE, values: [der.printableString('19')] },
  { type: SENDER_NONCE, values: [der.octetString(Buffer.alloc(16, 7))] },
];

async function opensslVerify(
  name: string,
  data: Uint8Array,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const path = await w.file(name, data);
  return openssl(
    ['cms', '-verify', '-inform', 'DER', '-in', path, '-CAfile', 'ca.pem', '-binary', '-purpose', 'any'],
    {
      cwd: w.dir,
    },
  );
}

describe('SignedData written by certwright', () => {
  const cases: [string, CmsDigest][] = [
    ['RSA-2048', 'sha256'],
    ['RSA-2048', 'sha1'],
    ['RSA-2048', 'sha512'],
    ['ECDSA-P256', 'sha256'],
    ['ECDSA-P384', 'sha384'],
  ];
  for (const [alg, digest] of cases) {
    it(`openssl cms -verify accepts it (${alg}, ${digest})`, async () => {
      const p = parties[alg]!;
      const signed = buildSignedData({
        content: CONTENT,
        signer: { certificate: p.der, privateKey: p.key },
        digest,
        signedAttributes: scepAttributes,
        signingTime: new Date('2030-01-02T03:04:05Z'),
      });
      const r = await opensslVerify(`ours-${alg}-${digest}.der`, signed);
      expect(r.stderr).toContain('Verification successful');
      expect(r.stdout).toBe(CONTENT.toString());
      // And our own verifier agrees.
      const parsed = parseSignedData(signed);
      const v = verifySignerInfo(parsed, parsed.signers[0]!, p.der);
      expect(v.digest).toBe(digest);
      expect(v.signingTime?.toISOString()).toBe('2030-01-02T03:04:05.000Z');
    });
  }

  it('signs with Ed25519 and SHA-512 (RFC 8419; OpenSSL 3.0 has no Ed25519 in CMS, so only our verifier checks it)', () => {
    const p = parties.Ed25519!;
    const signed = buildSignedData({
      content: CONTENT,
      signer: { certificate: p.der, privateKey: p.key },
      digest: 'sha512',
    });
    const parsed = parseSignedData(signed);
    expect(verifySignerInfo(parsed, parsed.signers[0]!, p.der).digest).toBe('sha512');
    expect(
      reasonOf(() =>
        buildSignedData({
          content: CONTENT,
          signer: { certificate: p.der, privateKey: p.key },
          digest: 'sha256',
        }),
      ),
    ).toBe('invalid_input');
  });

  it('writes the signed attributes as a DER SET OF (sorted by encoding)', () => {
    const p = parties['RSA-2048']!;
    const parsed = parseSignedData(
      buildSignedData({
        content: CONTENT,
        signer: { certificate: p.der, privateKey: p.key },
        digest: 'sha256',
        signedAttributes: scepAttributes,
      }),
    );
    const raw = parsed.signers[0]!.signedAttributesDer!;
    const encodings = parsed.signers[0]!.signedAttributes!.map((a) =>
      der.sequence(der.oid(a.type), der.setOf(...a.values)),
    );
    expect([...encodings].sort(Buffer.compare)).toEqual(encodings);
    expect(Buffer.from(raw).subarray(raw.length - encodings.reduce((n, e) => n + e.length, 0))).toEqual(
      Buffer.concat(encodings),
    );
    expect(parsed.signers[0]!.signedAttributes!.map((a) => a.type)).toContain(TRANSACTION_ID);
    expect(attributeValues(parsed.signers[0]!.signedAttributes, MESSAGE_TYPE)).toEqual([
      der.printableString('19'),
    ]);
  });

  it('signs absent content as zero octets (SCEP failure replies), which openssl verifies as detached empty content', async () => {
    const p = parties['RSA-2048']!;
    const signed = buildSignedData({
      signer: { certificate: p.der, privateKey: p.key },
      digest: 'sha256',
      signedAttributes: scepAttributes,
    });
    const parsed = parseSignedData(signed);
    expect(parsed.content).toBeUndefined();
    expect(verifySignerInfo(parsed, parsed.signers[0]!, p.der).digest).toBe('sha256');
    const empty = await w.file('empty.bin', '');
    const path = await w.file('ours-empty.der', signed);
    const r = await openssl(
      [
        'cms',
        '-verify',
        '-inform',
        'DER',
        '-in',
        path,
        '-content',
        empty,
        '-CAfile',
        'ca.pem',
        '-binary',
        '-purpose',
        'any',
      ],
      {
        cwd: w.dir,
      },
    );
    expect(r.stderr).toContain('Verification successful');
  });

  it('names the signer by subject key identifier when asked (version 3)', async () => {
    const p = parties['ECDSA-P256']!;
    const signed = buildSignedData({
      content: CONTENT,
      signer: { certificate: p.der, privateKey: p.key },
      digest: 'sha256',
      signerIdentifier: 'subjectKeyIdentifier',
    });
    const parsed = parseSignedData(signed);
    expect(parsed.version).toBe(3);
    expect('subjectKeyIdentifier' in parsed.signers[0]!.sid).toBe(true);
    expect((await opensslVerify('ours-ski.der', signed)).stderr).toContain('Verification successful');
  });

  it('refuses a private key that is not the certificate’s, and attributes it writes itself', () => {
    const rsa = parties['RSA-2048']!;
    const ec = parties['ECDSA-P256']!;
    expect(
      reasonOf(() =>
        buildSignedData({
          content: CONTENT,
          signer: { certificate: rsa.der, privateKey: ec.key },
          digest: 'sha256',
        }),
      ),
    ).toBe('invalid_input');
    expect(
      reasonOf(() =>
        buildSignedData({
          content: CONTENT,
          signer: { certificate: rsa.der, privateKey: rsa.key },
          digest: 'sha256',
          signedAttributes: [{ type: CMS_OID.messageDigest, values: [der.octetString(Buffer.alloc(32))] }],
        }),
      ),
    ).toBe('invalid_input');
  });
});

describe('SignedData written by openssl', () => {
  for (const [alg, md] of [
    ['RSA-2048', 'sha1'],
    ['RSA-2048', 'sha256'],
    ['RSA-2048', 'sha512'],
    ['ECDSA-P256', 'sha256'],
  ] as const) {
    it(`verifies openssl cms -sign (${alg}, ${md})`, async () => {
      const out = `${w.dir}/ossl-${alg}-${md}.der`;
      const r = await openssl(
        [
          'cms',
          '-sign',
          '-binary',
          '-nodetach',
          '-in',
          'content.bin',
          '-signer',
          `${alg}.pem`,
          '-inkey',
          `${alg}.key`,
          '-md',
          md,
          '-outform',
          'DER',
          '-out',
          out,
        ],
        { cwd: w.dir },
      );
      expect(r.code).toBe(0);
      const parsed = parseSignedData(await readFile(out));
      expect(Buffer.from(parsed.content!).equals(CONTENT)).toBe(true);
      expect(parsed.certificates.map((c) => Buffer.from(c))).toContainEqual(parties[alg]!.der);
      expect(verifySignerInfo(parsed, parsed.signers[0]!, parties[alg]!.der).digest).toBe(md);
    });
  }

  it('verifies streamed BER output and detached signatures with the content given', async () => {
    const p = parties['RSA-2048']!;
    const stream = `${w.dir}/ossl-stream.der`;
    await openssl(
      [
        'cms',
        '-sign',
        '-binary',
        '-nodetach',
        '-stream',
        '-in',
        'content.bin',
        '-signer',
        'RSA-2048.pem',
        '-inkey',
        'RSA-2048.key',
        '-outform',
        'DER',
        '-out',
        stream,
      ],
      {
        cwd: w.dir,
      },
    );
    const ber = await readFile(stream);
    expect(ber[1]).toBe(0x80);
    const parsed = parseSignedData(ber);
    expect(verifySignerInfo(parsed, parsed.signers[0]!, p.der).digest).toBe('sha256');

    const detached = `${w.dir}/ossl-detached.der`;
    await openssl(
      [
        'cms',
        '-sign',
        '-binary',
        '-in',
        'content.bin',
        '-signer',
        'RSA-2048.pem',
        '-inkey',
        'RSA-2048.key',
        '-outform',
        'DER',
        '-out',
        detached,
      ],
      {
        cwd: w.dir,
      },
    );
    const d = parseSignedData(await readFile(detached));
    expect(d.content).toBeUndefined();
    expect(verifySignerInfo(d, d.signers[0]!, p.der, { content: CONTENT }).digest).toBe('sha256');
    expect(reasonOf(() => verifySignerInfo(d, d.signers[0]!, p.der, { content: Buffer.from('other') }))).toBe(
      'signature_invalid',
    );
  });
});

describe('SignedData that must not verify', () => {
  const build = () => {
    const p = parties['RSA-2048']!;
    return buildSignedData({
      content: CONTENT,
      signer: { certificate: p.der, privateKey: p.key },
      digest: 'sha256',
      signedAttributes: scepAttributes,
    });
  };

  it('altered content: the message digest does not match', () => {
    const signed = build();
    const at = signed.indexOf(CONTENT);
    signed[at]! ^= 0x20;
    const parsed = parseSignedData(signed);
    expect(reasonOf(() => verifySignerInfo(parsed, parsed.signers[0]!, parties['RSA-2048']!.der))).toBe(
      'signature_invalid',
    );
  });

  it('an altered signature, or a signed attribute altered after signing', () => {
    const signed = build();
    const sigAltered = Buffer.from(signed);
    sigAltered[sigAltered.length - 3]! ^= 0x01;
    let parsed = parseSignedData(sigAltered);
    expect(reasonOf(() => verifySignerInfo(parsed, parsed.signers[0]!, parties['RSA-2048']!.der))).toBe(
      'signature_invalid',
    );
    const attrAltered = Buffer.from(signed);
    const at = attrAltered.indexOf(Buffer.from('abc123'));
    attrAltered[at]! = 0x78;
    parsed = parseSignedData(attrAltered);
    expect(reasonOf(() => verifySignerInfo(parsed, parsed.signers[0]!, parties['RSA-2048']!.der))).toBe(
      'signature_invalid',
    );
  });

  it('another certificate than the signer’s', () => {
    const parsed = parseSignedData(build());
    expect(reasonOf(() => verifySignerInfo(parsed, parsed.signers[0]!, parties['ECDSA-P256']!.der))).toBe(
      'signature_invalid',
    );
  });

  it('an unknown digest algorithm', () => {
    const parsed = parseSignedData(build());
    const signer = { ...parsed.signers[0]!, digestAlgorithm: '1.2.840.113549.2.5' }; // MD5
    expect(reasonOf(() => verifySignerInfo(parsed, signer, parties['RSA-2048']!.der))).toBe(
      'signature_algorithm_not_allowed',
    );
  });
});

describe('certificates-only SignedData', () => {
  it('buildCertsOnly: openssl pkcs7 -print_certs lists the certificates in the order given', async () => {
    const certs = [fx.root.der, parties['RSA-2048']!.der];
    const path = await w.file('certs-only.der', buildCertsOnly(certs));
    const r = await openssl(['pkcs7', '-inform', 'DER', '-in', path, '-print_certs']);
    expect(r.code).toBe(0);
    const subjects = [...r.stdout.matchAll(/^subject=(.*)$/gm)].map((m) => m[1]);
    expect(subjects).toEqual([
      expect.stringContaining('test root'),
      expect.stringContaining('signer-RSA-2048'),
    ]);
    expect(parseCertsOnly(await readFile(path)).map((c) => Buffer.from(c))).toEqual(certs);
  });

  it('parseCertsOnly reads openssl crl2pkcs7 output', async () => {
    const out = `${w.dir}/crl2p7.der`;
    await openssl(['crl2pkcs7', '-nocrl', '-certfile', 'ca.pem', '-outform', 'DER', '-out', out], {
      cwd: w.dir,
    });
    expect(parseCertsOnly(await readFile(out))).toHaveLength(2);
  });

  it('an empty list is a valid certs-only message', () => {
    expect(parseCertsOnly(buildCertsOnly([]))).toEqual([]);
  });
});

describe('a real client message', () => {
  it('reads a PKCSReq written by micromdm scepclient 2.1: self-signed signer, SHA-1, single-DES envelope', () => {
    const message = readFileSync(new URL('./fixtures/scepclient-2.1-pkcsreq.der', import.meta.url));
    const parsed = parseSignedData(message);
    expect(parsed.signers).toHaveLength(1);
    expect(parsed.certificates).toHaveLength(1);
    const v = verifySignerInfo(parsed, parsed.signers[0]!, parsed.certificates[0]!);
    expect(v.digest).toBe('sha1');
    expect(v.certificate.subject.text).toContain('SCEP SIGNER');
    expect(attributeValues(parsed.signers[0]!.signedAttributes, MESSAGE_TYPE)).toEqual([
      der.printableString('19'),
    ]);
    const envelope = describeEnvelopedData(parsed.content!);
    expect(envelope.contentEncryption).toBe('des-cbc');
    expect(envelope.recipients).toHaveLength(1);
  });
});
