import { constants, createPublicKey, randomUUID, verify, X509Certificate } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isCertwrightError } from '../errors.js';
import { mechanismHash } from '../key-custody/mechanisms.js';
import { createSelfSignedCertificate } from '../pki/certificate.js';
import { describePublicKey, type KeyAlgorithm, keyAlgorithmName } from '../pki/keys.js';
import type { SignMechanism } from '../pki/signing-key.js';
import type { KeyCustody } from '../ports/key-custody.js';

export interface KeyCustodyContractSubject {
  custody: KeyCustody;
  /** Whether the custody can hold Ed25519 keys (tokens differ); when false, creation must be refused. */
  ed25519: boolean;
  /** Whether keys created non-extractable are reported so by list(). */
  reportsExtractable: boolean;
  close?(): Promise<void>;
}

export interface KeyCustodyContractOptions {
  skip?: string | undefined;
}

const reasonOf = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
  } catch (error) {
    if (isCertwrightError(error)) return error.reason;
    throw error;
  }
  throw new Error('expected a failure');
};

/** Verifies `signature` over `data` with node:crypto, independently of the custody. */
export function verifyWithSpki(
  spki: Uint8Array,
  mechanism: SignMechanism,
  data: Uint8Array,
  signature: Uint8Array,
): boolean {
  const key = createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' });
  const pss = mechanism.startsWith('RSA-PSS-');
  return verify(
    mechanismHash(mechanism),
    data,
    pss
      ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }
      : key,
    signature,
  );
}

/**
 * The behaviour every {@link KeyCustody} must have. Labels are random per test, so subjects may
 * share one token; each test destroys what it created.
 */
export function describeKeyCustodyContract(
  name: string,
  factory: () => Promise<KeyCustodyContractSubject>,
  options: KeyCustodyContractOptions = {},
): void {
  if (options.skip) {
    console.warn(`[key custody contract] skipping ${name}: ${options.skip}`);
    describe.skip(`KeyCustody contract: ${name}`, () => {
      it('skipped', () => {});
    });
    return;
  }
  describe(`KeyCustody contract: ${name}`, () => {
    let subject: KeyCustodyContractSubject;
    let custody: KeyCustody;
    const created: string[] = [];
    const label = (what: string) => {
      const l = `contract ${what} ${randomUUID().slice(0, 8)}`;
      created.push(l);
      return l;
    };

    beforeEach(async () => {
      subject = await factory();
      custody = subject.custody;
    });
    afterEach(async () => {
      for (const l of created.splice(0)) await custody.destroy(l).catch(() => undefined);
      await subject.close?.();
    });

    const cases: Array<[KeyAlgorithm, SignMechanism[]]> = [
      ['ECDSA-P256', ['ECDSA-SHA256']],
      ['ECDSA-P384', ['ECDSA-SHA384', 'ECDSA-SHA256']],
      ['RSA-2048', ['RSA-PKCS1-SHA256', 'RSA-PKCS1-SHA384', 'RSA-PSS-SHA256', 'RSA-PSS-SHA384']],
    ];
    for (const [algorithm, mechanisms] of cases) {
      it(`creates a ${algorithm} key whose signatures (${mechanisms.join(', ')}) verify with its public key`, async () => {
        const l = label(algorithm);
        const info = await custody.createKey({ algorithm, label: l, extractable: false });
        expect(info).toMatchObject({ label: l, algorithm });
        const spki = await custody.publicKey(l);
        expect(keyAlgorithmName(describePublicKey(spki))).toBe(algorithm);
        const data = Buffer.from(`to be signed by ${l}`);
        for (const mechanism of mechanisms) {
          const signature = await custody.sign(l, mechanism, data);
          expect(verifyWithSpki(spki, mechanism, data, signature), mechanism).toBe(true);
          expect(verifyWithSpki(spki, mechanism, Buffer.from('other data'), signature)).toBe(false);
        }
        const handle = await custody.signingKey(l);
        expect(handle.spki.equals(spki)).toBe(true);
        expect(verifyWithSpki(spki, mechanisms[0]!, data, handle.sign(mechanisms[0]!, data))).toBe(true);
      });
    }

    it('holds Ed25519 keys where supported and refuses them clearly where not', async () => {
      const l = label('ed25519');
      if (!subject.ed25519) {
        expect(
          await reasonOf(custody.createKey({ algorithm: 'Ed25519', label: l, extractable: false })),
        ).toBe('key_not_allowed');
        return;
      }
      await custody.createKey({ algorithm: 'Ed25519', label: l, extractable: false });
      const spki = await custody.publicKey(l);
      const signature = await custody.sign(l, 'Ed25519', Buffer.from('x'));
      expect(
        verify(
          null,
          Buffer.from('x'),
          createPublicKey({ key: spki, format: 'der', type: 'spki' }),
          signature,
        ),
      ).toBe(true);
    });

    it('signs certificates through the PKI builders with a handle', async () => {
      const l = label('cert');
      await custody.createKey({ algorithm: 'ECDSA-P256', label: l, extractable: false });
      const handle = await custody.signingKey(l);
      const now = Date.now();
      const cert = createSelfSignedCertificate(
        {
          subject: [{ type: 'CN', value: 'custody contract' }],
          notBefore: new Date(now - 60_000),
          notAfter: new Date(now + 86_400_000),
          basicConstraints: { ca: true, pathLength: 0 },
        },
        handle,
      );
      const x = new X509Certificate(cert.der);
      expect(x.verify(x.publicKey)).toBe(true);
    });

    it('lists created keys with their algorithm and extractability, and forgets destroyed ones', async () => {
      const l = label('list');
      await custody.createKey({ algorithm: 'ECDSA-P256', label: l, extractable: false });
      const listed = (await custody.list()).find((k) => k.label === l);
      expect(listed).toMatchObject({ label: l, algorithm: 'ECDSA-P256' });
      if (subject.reportsExtractable) expect(listed?.extractable).toBe(false);
      await custody.destroy(l);
      expect((await custody.list()).some((k) => k.label === l)).toBe(false);
      expect(await reasonOf(custody.publicKey(l))).toBe('not_found');
      expect(await reasonOf(custody.sign(l, 'ECDSA-SHA256', Buffer.from('x')))).toBe('not_found');
    });

    it('refuses a label in use, an unknown label, a bad label and a mechanism that does not fit the key', async () => {
      const l = label('dup');
      await custody.createKey({ algorithm: 'ECDSA-P256', label: l, extractable: false });
      expect(
        await reasonOf(custody.createKey({ algorithm: 'ECDSA-P384', label: l, extractable: false })),
      ).toBe('duplicate');
      expect(await reasonOf(custody.publicKey(`missing ${randomUUID()}`))).toBe('not_found');
      expect(await reasonOf(custody.destroy(`missing ${randomUUID()}`))).toBe('not_found');
      expect(await reasonOf(custody.signingKey(`missing ${randomUUID()}`))).toBe('not_found');
      expect(
        await reasonOf(custody.createKey({ algorithm: 'ECDSA-P256', label: '', extractable: false })),
      ).toBe('invalid_input');
      expect(
        await reasonOf(
          custody.createKey({
            algorithm: 'DSA-1024' as KeyAlgorithm,
            label: label('dsa'),
            extractable: false,
          }),
        ),
      ).toBe('key_not_allowed');
      expect(await reasonOf(custody.sign(l, 'RSA-PKCS1-SHA256', Buffer.from('x')))).toBe('key_not_allowed');
      // The refused create left the first key as it was.
      const data = Buffer.from('still the same key');
      expect(
        verifyWithSpki(
          await custody.publicKey(l),
          'ECDSA-SHA256',
          data,
          await custody.sign(l, 'ECDSA-SHA256', data),
        ),
      ).toBe(true);
    });

    it('signs correctly under concurrency', async () => {
      const a = label('conc a');
      const b = label('conc b');
      await custody.createKey({ algorithm: 'ECDSA-P256', label: a, extractable: false });
      await custody.createKey({ algorithm: 'RSA-2048', label: b, extractable: false });
      const [spkiA, spkiB] = [await custody.publicKey(a), await custody.publicKey(b)];
      const jobs = Array.from({ length: 24 }, (_, i) => {
        const data = Buffer.from(`message ${i}`);
        const [l, m, spki] =
          i % 2 ? ([b, 'RSA-PKCS1-SHA256', spkiB] as const) : ([a, 'ECDSA-SHA256', spkiA] as const);
        return custody.sign(l, m, data).then((sig) => verifyWithSpki(spki, m, data, sig));
      });
      expect(await Promise.all(jobs)).toEqual(Array(24).fill(true));
    });

    it('is ready while usable', async () => {
      expect(await custody.ready()).toBe(true);
    });
  });
}
