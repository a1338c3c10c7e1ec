/**
 * Regenerates the post-quantum fuzz seeds (run on Node.js 24 from the repository root:
 * `node --import tsx packages/core/test/pki/fuzz/corpus/post-quantum/make.ts`). The files are
 * committed so that a seeded fuzz run replays exactly, and so that the key readers are fuzzed
 * on Node.js 20 too. ML-DSA and SLH-DSA signing is randomized, so each run writes new bytes.
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createCertificationRequest } from '../../../../../src/pki/csr-builder.js';
import { exportPkcs8Der, exportSpkiDer } from '../../../../../src/pki/keys.js';
import { SIGNED_MESSAGE } from '../../post-quantum-targets.js';

const dir = new URL('./', import.meta.url);
const write = (name: string, bytes: Uint8Array) => writeFileSync(new URL(name, dir), bytes);

for (const [file, type] of [
  ['ml-dsa-44', 'ml-dsa-44'],
  ['ml-dsa-87', 'ml-dsa-87'],
  ['slh-dsa-sha2-128s', 'slh-dsa-sha2-128s'],
] as const) {
  const { publicKey, privateKey } = generateKeyPairSync(type as 'ed25519');
  write(`${file}.spki.der`, exportSpkiDer(publicKey));
  write(`${file}.pkcs8.der`, exportPkcs8Der(privateKey));
  write(`${file}.sig`, sign(null, Buffer.from(SIGNED_MESSAGE), privateKey));
  write(
    `${file}.csr.der`,
    createCertificationRequest({
      subject: [
        { type: 'O', value: 'Example GmbH' },
        { type: 'CN', value: `${file}.example.test` },
      ],
      privateKey,
      subjectAltNames: [
        { type: 'dns', value: `${file}.example.test` },
        { type: 'ip', value: '192.0.2.7' },
      ],
      challengePassword: 's3cret-otp',
    }),
  );
}
