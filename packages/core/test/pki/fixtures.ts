import type { KeyObject } from 'node:crypto';
import {
  type CertificateTemplate,
  createSelfSignedCertificate,
  generateKeyPair,
  type IssuingAuthority,
  issueCertificate,
  type KeyAlgorithm,
  prepareIssuer,
} from '../../src/pki/index.js';

export const DAY = 86_400_000;
export const NOW = new Date();
export const days = (n: number): Date => new Date(NOW.getTime() + n * DAY);

export interface Ca {
  key: KeyObject;
  der: Buffer;
  authority: IssuingAuthority;
}

export interface Hierarchy {
  root: Ca;
  intermediate: Ca;
}

/** A root and an intermediate CA with keys of `alg`, as the Local CA connector would create them. */
export async function makeHierarchy(alg: KeyAlgorithm, name: string = alg): Promise<Hierarchy> {
  const rootKeys = await generateKeyPair(alg);
  const root = createSelfSignedCertificate(
    {
      subject: `CN=certwright test root ${name},O=certwright tests,C=DE`,
      notBefore: days(-1),
      notAfter: days(3650),
      basicConstraints: { ca: true },
    },
    rootKeys.privateKey,
  );
  const rootCa = {
    key: rootKeys.privateKey,
    der: root.der,
    authority: prepareIssuer(root.der, rootKeys.privateKey),
  };
  const intKeys = await generateKeyPair(alg);
  const intermediate = issueCertificate(
    {
      subject: `CN=certwright test intermediate ${name},O=certwright tests,C=DE`,
      publicKey: intKeys.publicKey,
      notBefore: days(-1),
      notAfter: days(1825),
      basicConstraints: { ca: true, pathLength: 0 },
      crlDistributionPoints: ['https://pki.example.test/crl/root'],
    },
    rootCa.authority,
  );
  return {
    root: rootCa,
    intermediate: {
      key: intKeys.privateKey,
      der: intermediate.der,
      authority: prepareIssuer(intermediate.der, intKeys.privateKey),
    },
  };
}

export async function issueLeaf(
  ca: Ca,
  alg: KeyAlgorithm,
  overrides: Partial<CertificateTemplate> = {},
): Promise<{ key: KeyObject; der: Buffer; serialNumber: string }> {
  const keys = await generateKeyPair(alg);
  const leaf = issueCertificate(
    {
      subject: 'CN=leaf.example.test',
      publicKey: keys.publicKey,
      notBefore: days(-1),
      notAfter: days(90),
      subjectAltNames: [{ type: 'dns', value: 'leaf.example.test' }],
      extendedKeyUsage: ['serverAuth', 'clientAuth'],
      ...overrides,
    },
    ca.authority,
  );
  return { key: keys.privateKey, der: leaf.der, serialNumber: leaf.serialNumber };
}
