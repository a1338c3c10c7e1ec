import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildEnvelopedData,
  CMS_OID,
  describeEnvelopedData,
  exportSpkiDer,
  openEnvelopedData,
  readCertificate,
} from '../../../src/pki/index.js';
import { openssl, workdir } from '../openssl.js';
import { type CmsFixture, cmsFixture, type Party, reasonOf } from './support.js';

let w: Awaited<ReturnType<typeof workdir>>;
let fx: CmsFixture;
let ra: Party;
let other: Party;
let ec: Party;
const CONTENT = Buffer.from('a PKCS#10 request would be here\n'.repeat(20));

beforeAll(async () => {
  w = await workdir();
  fx = await cmsFixture('cms-env');
  ra = await fx.party('RSA-2048', 'ra.example.test');
  other = await fx.party('RSA-2048', 'other.example.test');
  ec = await fx.party('ECDSA-P256', 'ec.example.test');
  await w.file('ra.pem', ra.certPem);
  await w.file('ra.key', ra.keyPem);
  await w.file('other.pem', other.certPem);
  await w.file('other.key', other.keyPem);
  await w.file('content.bin', CONTENT);
});
afterAll(async () => {
  await w.cleanup();
});

/** Encrypts CONTENT with `openssl cms -encrypt` and the given options; returns the DER. */
async function opensslEncrypt(name: string, args: string[], recipients = ['ra.pem']): Promise<Buffer> {
  const out = `${w.dir}/${name}.der`;
  const r = await openssl(
    [
      'cms',
      '-encrypt',
      '-binary',
      '-in',
      'content.bin',
      '-outform',
      'DER',
      '-out',
      out,
      ...args,
      ...recipients,
    ],
    { cwd: w.dir },
  );
  expect(r.stderr).toBe('');
  return readFile(out);
}

describe('EnvelopedData written by certwright', () => {
  for (const alg of ['aes-128-cbc', 'aes-256-cbc'] as const) {
    it(`openssl cms -decrypt recovers the content (${alg}, recipient by issuer and serial)`, async () => {
      const der = buildEnvelopedData({
        content: CONTENT,
        recipient: { certificate: ra.der },
        contentEncryption: alg,
      });
      const path = await w.file(`ours-${alg}.der`, der);
      const r = await openssl(
        ['cms', '-decrypt', '-inform', 'DER', '-in', path, '-recip', 'ra.pem', '-inkey', 'ra.key', '-binary'],
        {
          cwd: w.dir,
        },
      );
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(CONTENT.toString());
      const printed = await openssl(['cms', '-cmsout', '-print', '-inform', 'DER', '-in', path]);
      expect(printed.stdout).toContain(alg === 'aes-128-cbc' ? 'aes-128-cbc' : 'aes-256-cbc');
      expect(printed.stdout).toContain('rsaEncryption');
      expect(describeEnvelopedData(der)).toMatchObject({ contentType: CMS_OID.data, contentEncryption: alg });
    });
  }

  it('names a bare key by its subject key identifier (version 2), which openssl finds without -recip', async () => {
    const cert = readCertificate(ra.der);
    const der = buildEnvelopedData({
      content: CONTENT,
      recipient: { spki: exportSpkiDer(ra.key), subjectKeyIdentifier: cert.keyIdentifier },
      contentEncryption: 'aes-256-cbc',
    });
    const path = await w.file('ours-ski.der', der);
    const r = await openssl(
      ['cms', '-decrypt', '-inform', 'DER', '-in', path, '-inkey', 'ra.key', '-binary'],
      { cwd: w.dir },
    );
    expect(r.stdout).toBe(CONTENT.toString());
    const printed = await openssl(['cms', '-cmsout', '-print', '-inform', 'DER', '-in', path]);
    expect(printed.stdout).toMatch(/version: 2/);
    expect(printed.stdout).toContain('d.subjectKeyIdentifier');
    expect(openEnvelopedData(der, { privateKey: ra.key, certificate: ra.der }).equals(CONTENT)).toBe(true);
  });

  it('round-trips through openEnvelopedData', () => {
    const der = buildEnvelopedData({
      content: CONTENT,
      recipient: { certificate: ra.der },
      contentEncryption: 'aes-128-cbc',
    });
    expect(openEnvelopedData(der, { privateKey: ra.key }).equals(CONTENT)).toBe(true);
    expect(openEnvelopedData(der, { privateKey: ra.key, certificate: ra.der }).equals(CONTENT)).toBe(true);
  });

  it('refuses a recipient key that cannot transport a key (EC) and single DES or 3DES output', () => {
    expect(
      reasonOf(() =>
        buildEnvelopedData({
          content: CONTENT,
          recipient: { certificate: ec.der },
          contentEncryption: 'aes-256-cbc',
        }),
      ),
    ).toBe('key_not_allowed');
    expect(
      reasonOf(() =>
        buildEnvelopedData({
          content: CONTENT,
          recipient: { certificate: ra.der },
          contentEncryption: 'des-cbc' as never,
        }),
      ),
    ).toBe('signature_algorithm_not_allowed');
  });
});

describe('EnvelopedData written by openssl', () => {
  for (const [cipher, flag] of [
    ['aes-128-cbc', '-aes128'],
    ['aes-192-cbc', '-aes192'],
    ['aes-256-cbc', '-aes256'],
    ['des-ede3-cbc', '-des3'],
  ] as const) {
    it(`opens ${cipher} content`, async () => {
      const der = await opensslEncrypt(`ossl-${cipher}`, [flag]);
      expect(describeEnvelopedData(der).contentEncryption).toBe(cipher);
      expect(openEnvelopedData(der, { privateKey: ra.key, certificate: ra.der }).equals(CONTENT)).toBe(true);
    });
  }

  it('opens BER from a streaming encoder (indefinite lengths, chunked content)', async () => {
    const der = await opensslEncrypt('ossl-stream', ['-aes256', '-stream']);
    expect(der[1]).toBe(0x80); // indefinite length: BER
    expect(openEnvelopedData(der, { privateKey: ra.key, certificate: ra.der }).equals(CONTENT)).toBe(true);
  });

  it('opens RSA-OAEP key transport (SHA-1 and SHA-256)', async () => {
    // -keyopt applies to the -recip before it.
    const sha1 = await opensslEncrypt(
      'ossl-oaep1',
      ['-aes128', '-recip', 'ra.pem', '-keyopt', 'rsa_padding_mode:oaep'],
      [],
    );
    expect(openEnvelopedData(sha1, { privateKey: ra.key }).equals(CONTENT)).toBe(true);
    const sha256 = await opensslEncrypt(
      'ossl-oaep256',
      [
        '-aes128',
        '-recip',
        'ra.pem',
        '-keyopt',
        'rsa_padding_mode:oaep',
        '-keyopt',
        'rsa_oaep_md:sha256',
        '-keyopt',
        'rsa_mgf1_md:sha256',
      ],
      [],
    );
    expect(describeEnvelopedData(sha256).recipients[0]!.keyEncryption).toBe(CMS_OID.rsaesOaep);
    expect(openEnvelopedData(sha256, { privateKey: ra.key }).equals(CONTENT)).toBe(true);
  });

  it('refuses single DES unless the caller allows it', async () => {
    const der = await opensslEncrypt('ossl-des', ['-des', '-provider', 'legacy', '-provider', 'default']);
    expect(describeEnvelopedData(der).contentEncryption).toBe('des-cbc');
    expect(reasonOf(() => openEnvelopedData(der, { privateKey: ra.key }))).toBe(
      'signature_algorithm_not_allowed',
    );
    expect(openEnvelopedData(der, { privateKey: ra.key, allowSingleDes: true }).equals(CONTENT)).toBe(true);
  });

  it('refuses a content cipher it does not know', async () => {
    const der = await opensslEncrypt('ossl-camellia', ['-camellia128']);
    expect(reasonOf(() => openEnvelopedData(der, { privateKey: ra.key }))).toBe(
      'signature_algorithm_not_allowed',
    );
  });

  it('picks the recipient that names its certificate among several', async () => {
    const der = await opensslEncrypt('ossl-two', ['-aes256'], ['other.pem', 'ra.pem']);
    expect(describeEnvelopedData(der).recipients).toHaveLength(2);
    expect(openEnvelopedData(der, { privateKey: ra.key, certificate: ra.der }).equals(CONTENT)).toBe(true);
    expect(openEnvelopedData(der, { privateKey: other.key, certificate: other.der }).equals(CONTENT)).toBe(
      true,
    );
    expect(reasonOf(() => openEnvelopedData(der, { privateKey: ra.key }))).toBe('invalid_input');
  });
});

describe('EnvelopedData that must not open', () => {
  it('a message for another certificate: not_found (SCEP badCertId)', async () => {
    const der = await opensslEncrypt('ossl-other', ['-aes256'], ['other.pem']);
    expect(reasonOf(() => openEnvelopedData(der, { privateKey: ra.key, certificate: ra.der }))).toBe(
      'not_found',
    );
  });

  it('the wrong key, an altered encrypted key and altered content all fail the same way, at content decryption', async () => {
    const der = buildEnvelopedData({
      content: CONTENT,
      recipient: { certificate: ra.der },
      contentEncryption: 'aes-256-cbc',
    });
    const errors: string[] = [];
    const capture = (fn: () => unknown) => {
      try {
        fn();
        errors.push('no error');
      } catch (e) {
        errors.push(`${(e as { reason: string }).reason}: ${(e as Error).message}`);
      }
    };
    // The wrong key must have the larger modulus: a ciphertext at or above the opener's modulus is
    // refused as malformed before any padding is looked at (the modulus is public, so that says
    // nothing about the padding), and random 2048-bit moduli fall either way.
    const modulus = (p: Party) =>
      BigInt(`0x${Buffer.from(p.key.export({ format: 'jwk' }).n!, 'base64url').toString('hex')}`);
    const [smaller, larger] = modulus(ra) < modulus(other) ? [ra, other] : [other, ra];
    const forSmaller = buildEnvelopedData({
      content: CONTENT,
      recipient: { certificate: smaller.der },
      contentEncryption: 'aes-256-cbc',
    });
    capture(() => openEnvelopedData(forSmaller, { privateKey: larger.key }));
    // The encrypted key sits before the content-encryption AlgorithmIdentifier: flip one of its octets.
    const keyAt = der.indexOf(Buffer.from([0x04, 0x82, 0x01, 0x00])) + 4 + 100;
    const badKey = Buffer.from(der);
    badKey[keyAt]! ^= 0x01;
    capture(() => openEnvelopedData(badKey, { privateKey: ra.key }));
    const badContent = Buffer.from(der);
    badContent[badContent.length - 5]! ^= 0x01;
    capture(() => openEnvelopedData(badContent, { privateKey: ra.key }));
    expect(errors).toEqual(Array(3).fill('signature_invalid: the enveloped content could not be decrypted'));
  });

  it('truncated, garbage, empty and oversized input: malformed / too_large', () => {
    const der = buildEnvelopedData({
      content: CONTENT,
      recipient: { certificate: ra.der },
      contentEncryption: 'aes-256-cbc',
    });
    expect(reasonOf(() => openEnvelopedData(der.subarray(0, der.length - 10), { privateKey: ra.key }))).toBe(
      'malformed',
    );
    expect(reasonOf(() => openEnvelopedData(Buffer.from('garbage'), { privateKey: ra.key }))).toBe(
      'malformed',
    );
    expect(reasonOf(() => openEnvelopedData(new Uint8Array(), { privateKey: ra.key }))).toBe('malformed');
    expect(reasonOf(() => openEnvelopedData(der, { privateKey: ra.key, limits: { maxBytes: 100 } }))).toBe(
      'too_large',
    );
  });

  it('a SignedData where an EnvelopedData belongs: malformed', async () => {
    const r = await openssl(
      ['crl2pkcs7', '-nocrl', '-certfile', 'ra.pem', '-outform', 'DER', '-out', 'p7.der'],
      { cwd: w.dir },
    );
    expect(r.code).toBe(0);
    const p7 = await readFile(`${w.dir}/p7.der`);
    expect(reasonOf(() => openEnvelopedData(p7, { privateKey: ra.key }))).toBe('malformed');
  });
});
