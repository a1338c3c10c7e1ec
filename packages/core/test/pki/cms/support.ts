import type { KeyObject } from 'node:crypto';
import { isCertwrightError } from '../../../src/errors.js';
import { certificateToPem, exportPkcs8Pem, type KeyAlgorithm } from '../../../src/pki/index.js';
import { type Ca, issueLeaf, makeHierarchy } from '../fixtures.js';

/** The reason of the CertwrightError `fn` throws ('no error' / 'untyped: …' otherwise). */
export function reasonOf(fn: () => unknown): string {
  try {
    fn();
    return 'no error';
  } catch (e) {
    return isCertwrightError(e) ? e.reason : `untyped: ${String(e)}`;
  }
}

export interface Party {
  key: KeyObject;
  der: Buffer;
  certPem: string;
  keyPem: string;
}

export interface CmsFixture {
  root: Ca;
  /** Root and intermediate PEM, for `openssl cms -verify -CAfile`. */
  caBundlePem: string;
  party: (alg: KeyAlgorithm, cn: string) => Promise<Party>;
}

/** A CA hierarchy and a way to issue parties (recipients, signers) under it. */
export async function cmsFixture(name: string): Promise<CmsFixture> {
  const h = await makeHierarchy('ECDSA-P256', name);
  return {
    root: h.root,
    caBundlePem: certificateToPem(h.root.der) + certificateToPem(h.intermediate.der),
    party: async (alg, cn) => {
      const leaf = await issueLeaf(h.intermediate, alg, {
        subject: `CN=${cn}`,
        subjectAltNames: [],
        extendedKeyUsage: ['emailProtection', 'clientAuth'],
        keyUsage: alg.startsWith('RSA') ? ['digitalSignature', 'keyEncipherment'] : ['digitalSignature'],
      });
      return {
        key: leaf.key,
        der: leaf.der,
        certPem: certificateToPem(leaf.der),
        keyPem: exportPkcs8Pem(leaf.key),
      };
    },
  };
}
