#!/usr/bin/env node
// The Node.js 20 smoke set (`pnpm test:smoke`): the floor of the `engines` range runs only the
// files whose behaviour depends on the Node.js version — node:crypto and OpenSSL, the TLS
// listener, the Web streams bridge, the native PKCS#11 binding. The whole suite runs on Node.js
// 24 LTS (docs/development.md lists these files and why).
import { spawnSync } from 'node:child_process';

export const SMOKE = [
  // Node 20 refuses RSA PKCS#1 v1.5 decryption (CVE-2023-46809): SCEP and EST key transport take
  // the no-padding path with implicit rejection there, and only there.
  'packages/core/test/pki/cms/rsa-pkcs1-decrypt.test.ts',
  'packages/core/test/pki/cms/enveloped-data.test.ts',
  // Key generation, import and signatures of every algorithm through node:crypto and WebCrypto.
  'packages/core/src/pki/keys.test.ts',
  'packages/core/src/pki/jws-signature.test.ts',
  'packages/core/test/pki/pkcs12.test.ts',
  // The AES-GCM secret box, HKDF-derived audit key and scrypt password hashes.
  'packages/core/src/crypto/secret-box.test.ts',
  'packages/core/src/crypto/password-hash.test.ts',
  // Web Request/Response and streams over node:http, whose details differ between versions.
  'packages/core/test/node/bridge.test.ts',
  // The TLS 1.3 listener: protocol floor, client certificates, SIGHUP reload, drain.
  'packages/server/test/server.test.ts',
  'packages/server/test/runtime-support.test.ts',
  // Post-quantum keys need Node 24 with OpenSSL 3.5: Node 20 refuses PQ issuers and profiles.
  'packages/api/test/post-quantum-ca.test.ts',
  // The PKCS#11 binding: a Node-API addon compiled at install time, against SoftHSM2.
  'packages/key-custody-pkcs11/src/custody.test.ts',
];

if (import.meta.url === `file://${process.argv[1]}`) {
  const run = spawnSync(
    'vitest',
    ['run', '--testTimeout=180000', '--hookTimeout=180000', ...SMOKE, ...process.argv.slice(2)],
    { stdio: 'inherit' },
  );
  process.exit(run.status ?? 1);
}
