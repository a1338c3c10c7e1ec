import { createPrivateKey } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportPkcs12, exportSpkiDer, PKCS12_DEFAULT_ITERATIONS, pkcs12Kdf } from '../../src/pki/index.js';
import { issueLeaf, makeHierarchy } from './fixtures.js';
import { openssl, tool, workdir } from './openssl.js';

let w: Awaited<ReturnType<typeof workdir>>;
beforeAll(async () => {
  w = await workdir();
});
afterAll(async () => {
  await w.cleanup();
});

const PASSWORD = 'correct horse battery staple';

describe('PKCS#12 export', () => {
  for (const alg of ['RSA-2048', 'ECDSA-P256', 'Ed25519'] as const) {
    it(`writes a file openssl pkcs12 -info and Java keytool -list read (${alg})`, async () => {
      const h = await makeHierarchy(alg, `p12-${alg}`);
      const leaf = await issueLeaf(h.intermediate, alg);
      const p12 = exportPkcs12({
        privateKey: leaf.key,
        certificate: leaf.der,
        chain: [h.intermediate.der, h.root.der],
        password: PASSWORD,
      });
      const path = await w.file(`${alg}.p12`, p12);

      const info = await openssl(['pkcs12', '-info', '-in', path, '-passin', `pass:${PASSWORD}`, '-noenc']);
      expect(info.code).toBe(0);
      // 600,000 rounds for the MAC as for PBKDF2: a guess must not be cheaper to test on the MAC.
      expect(info.stderr).toContain('MAC: sha256, Iteration 600000');
      expect(info.stderr).toContain(
        'PKCS7 Encrypted data: PBES2, PBKDF2, AES-256-CBC, Iteration 600000, PRF hmacWithSHA256',
      );
      expect(info.stderr).toContain(
        'Shrouded Keybag: PBES2, PBKDF2, AES-256-CBC, Iteration 600000, PRF hmacWithSHA256',
      );
      expect(info.stdout.match(/-----BEGIN CERTIFICATE-----/g)).toHaveLength(3);
      expect(info.stdout).toContain('friendlyName: leaf.example.test');
      // The key that comes out is the key that went in.
      const keyPem = /-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----\n/.exec(info.stdout)![0];
      expect(exportSpkiDer(createPrivateKey(keyPem)).equals(exportSpkiDer(leaf.key))).toBe(true);

      const wrong = await openssl(['pkcs12', '-info', '-in', path, '-passin', 'pass:wrong', '-noenc']);
      expect(wrong.code).not.toBe(0);
      expect(wrong.stderr).toMatch(/mac verify/i);

      const kt = await tool('keytool', [
        '-list',
        '-v',
        '-storetype',
        'PKCS12',
        '-keystore',
        path,
        '-storepass',
        PASSWORD,
      ]);
      expect(kt.stderr).toBe('');
      expect(kt.code).toBe(0);
      expect(kt.stdout).toContain('Your keystore contains 1 entry');
      expect(kt.stdout).toContain('Alias name: leaf.example.test');
      expect(kt.stdout).toContain('Entry type: PrivateKeyEntry');
      expect(kt.stdout).toContain('Certificate chain length: 3');
      const ktWrong = await tool('keytool', [
        '-list',
        '-storetype',
        'PKCS12',
        '-keystore',
        path,
        '-storepass',
        'wrong-password',
      ]);
      expect(ktWrong.code).not.toBe(0);
    }, 60_000);
  }

  it('refuses a password under 8 characters naming the field, and a key that does not match the certificate', async () => {
    const h = await makeHierarchy('ECDSA-P256', 'p12-bad');
    const leaf = await issueLeaf(h.intermediate, 'ECDSA-P256');
    for (const password of ['', 'seven77', '\u{1f511}'.repeat(7)]) {
      expect(() => exportPkcs12({ privateKey: leaf.key, certificate: leaf.der, password })).toThrow(
        expect.objectContaining({
          reason: 'invalid_input',
          fields: [{ field: 'password', message: 'must be at least 8 characters' }],
        }),
      );
    }
    expect(
      exportPkcs12({ privateKey: leaf.key, certificate: leaf.der, password: 'eight888' }).length,
    ).toBeGreaterThan(0);
    expect(() => exportPkcs12({ privateKey: h.root.key, certificate: leaf.der, password: PASSWORD })).toThrow(
      /does not match/,
    );
  }, 30_000);

  it('refuses an iteration count below 600,000 (a caller cannot make the file cheap to guess)', async () => {
    const h = await makeHierarchy('ECDSA-P256', 'p12-iter');
    const leaf = await issueLeaf(h.intermediate, 'ECDSA-P256');
    expect(PKCS12_DEFAULT_ITERATIONS).toBe(600_000);
    for (const iterations of [2048, 599_999, 5_000_001, 600_000.5]) {
      expect(() =>
        exportPkcs12({ privateKey: leaf.key, certificate: leaf.der, password: PASSWORD, iterations }),
      ).toThrow(expect.objectContaining({ code: 'validation_failed' }));
    }
  }, 30_000);

  it('derives MAC keys like RFC 7292 Appendix B (SHA-256 vector cross-checked with OpenSSL)', async () => {
    // openssl's PKCS12KDF takes the password already in BMPString form with its two-byte terminator.
    const bmp = Buffer.concat([Buffer.from('password', 'utf16le').swap16(), Buffer.alloc(2)]).toString('hex');
    const salt = Buffer.from('0102030405060708', 'hex');
    const ours = pkcs12Kdf('password', salt, 3, 2048, 32).toString('hex');
    const r = await openssl([
      'kdf',
      '-keylen',
      '32',
      '-kdfopt',
      'digest:SHA256',
      '-kdfopt',
      `hexpass:${bmp}`,
      '-kdfopt',
      'hexsalt:0102030405060708',
      '-kdfopt',
      'iter:2048',
      '-kdfopt',
      'id:3',
      'PKCS12KDF',
    ]);
    expect(r.code).toBe(0);
    expect(ours).toBe(r.stdout.trim().replace(/:/g, '').toLowerCase());
  });

  it('derives the same MAC key as OpenSSL at the 600,000 rounds every export uses', async () => {
    const bmp = Buffer.concat([Buffer.from('pässword', 'utf16le').swap16(), Buffer.alloc(2)]).toString('hex');
    const salt = Buffer.from('a1b2c3d4e5f60718293a4b5c6d7e8f90', 'hex');
    const ours = pkcs12Kdf('pässword', salt, 3, 600_000, 32).toString('hex');
    const r = await openssl([
      'kdf',
      '-keylen',
      '32',
      '-kdfopt',
      'digest:SHA256',
      '-kdfopt',
      `hexpass:${bmp}`,
      '-kdfopt',
      `hexsalt:${salt.toString('hex')}`,
      '-kdfopt',
      'iter:600000',
      '-kdfopt',
      'id:3',
      'PKCS12KDF',
    ]);
    expect(r.code).toBe(0);
    expect(ours).toBe(r.stdout.trim().replace(/:/g, '').toLowerCase());
  }, 30_000);
});
