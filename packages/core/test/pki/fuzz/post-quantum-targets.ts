/**
 * Fuzz targets for the post-quantum readers: ML-DSA and SLH-DSA SubjectPublicKeyInfos, PKCS#8
 * keys, signatures and CSRs (the committed seeds of corpus/post-quantum, mutated, and random
 * DER). Each target passes when every input is accepted or refused with a CertwrightError; the
 * signature target also fails when a changed signature verifies. Used by
 * `post-quantum-fuzz.test.ts` and `pnpm bench fuzz` (≥ 100,000 cases per target).
 */
import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { isCertwrightError } from '../../../src/errors.js';
import { parseCertificationRequest } from '../../../src/pki/csr.js';
import { children, readOid, readRoot } from '../../../src/pki/der-reader.js';
import { checkPrivateKeyInfo, checkSubjectPublicKeyInfo } from '../../../src/pki/key-check.js';
import { importPkcs8Der, importSpkiDer } from '../../../src/pki/keys.js';
import { verifySignature } from '../../../src/pki/signature.js';
import { type FuzzTarget, mutated, randomDer } from '../../../src/testing/fuzz.js';

/** The message every `.sig` seed signs (corpus/post-quantum/make.ts). */
export const SIGNED_MESSAGE = 'certwright post-quantum fuzz seed';

const CORPUS = new URL('./corpus/post-quantum/', import.meta.url);
const files = (suffix: string): Buffer[] =>
  readdirSync(CORPUS)
    .filter((f) => f.endsWith(suffix))
    .sort()
    .map((f) => readFileSync(new URL(f, CORPUS)));

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

function typed(fn: () => unknown): void {
  try {
    fn();
  } catch (e) {
    if (!isCertwrightError(e)) throw e;
  }
}

interface SignatureCase {
  seed: number;
  signature: Buffer;
}

export function postQuantumTargets(): FuzzTarget[] {
  const spki = files('.spki.der');
  const pkcs8 = files('.pkcs8.der');
  const csr = files('.csr.der');
  const names = readdirSync(CORPUS)
    .filter((f) => f.endsWith('.sig'))
    .sort()
    .map((f) => f.slice(0, -'.sig'.length));
  const signatures = names.map((n) => ({
    spki: readFileSync(new URL(`${n}.spki.der`, CORPUS)),
    signature: readFileSync(new URL(`${n}.sig`, CORPUS)),
  }));
  const donors = [...spki, ...pkcs8, ...csr];
  const message = Buffer.from(SIGNED_MESSAGE);
  const oidOf = (key: Buffer): string => {
    const alg = children(key, readRoot(key))[0]!;
    return readOid(key, children(key, alg)[0]);
  };
  const bytes = (
    name: string,
    covers: string,
    seeds: Buffer[],
    run: (b: Buffer) => unknown,
  ): FuzzTarget<Buffer> => ({
    name,
    covers,
    inputs: fc.oneof({ weight: 6, arbitrary: mutated(seeds, donors) }, { weight: 1, arbitrary: randomDer }),
    run,
    size: (b) => b.length,
    show: hex,
  });
  const signatureTarget: FuzzTarget<SignatureCase> = {
    name: 'pq-signature',
    covers: 'verifySignature over ML-DSA/SLH-DSA signatures: changed, cut or grown ones never verify',
    inputs: fc
      .record({
        seed: fc.nat(signatures.length - 1),
        edits: fc.array(fc.record({ at: fc.nat(), bit: fc.nat(7) }), { minLength: 0, maxLength: 3 }),
        length: fc.oneof(fc.constant(0), fc.integer({ min: -64, max: 64 })),
      })
      .map(({ seed, edits, length }) => {
        const original = signatures[seed]!.signature;
        let signature = Buffer.from(original);
        for (const e of edits) signature[e.at % signature.length]! ^= 1 << e.bit;
        if (length < 0) signature = signature.subarray(0, signature.length + length);
        if (length > 0) signature = Buffer.concat([signature, Buffer.alloc(length, 0xa5)]);
        return { seed, signature };
      }),
    run: ({ seed, signature }) => {
      const { spki: key, signature: original } = signatures[seed]!;
      const ok = verifySignature(oidOf(key), key, message, signature);
      if (ok !== signature.equals(original))
        throw new Error(
          `verifySignature said ${ok} for a signature that ${ok ? 'was changed' : 'is the original'}`,
        );
      return ok;
    },
    size: ({ signature }) => signature.length,
    show: ({ seed, signature }) => `${names[seed]}: ${hex(signature)}`,
  };
  return [
    bytes('pq-spki', 'checkSubjectPublicKeyInfo / importSpkiDer over ML-DSA and SLH-DSA keys', spki, (b) => {
      checkSubjectPublicKeyInfo(b);
      return importSpkiDer(b);
    }),
    bytes(
      'pq-pkcs8',
      'checkPrivateKeyInfo / importPkcs8Der over the RFC 9881 §6 and RFC 9909 forms',
      pkcs8,
      (b) => {
        typed(() => checkPrivateKeyInfo(b));
        return importPkcs8Der(b);
      },
    ),
    bytes(
      'pq-csr',
      'parseCertificationRequest of ML-DSA and SLH-DSA requests (key check, signature)',
      csr,
      (b) => parseCertificationRequest(b),
    ),
    signatureTarget as FuzzTarget<unknown>,
  ];
}
