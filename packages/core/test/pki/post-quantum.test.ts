import { createHash, generateKeyPairSync, type KeyObject, X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isCertwrightError } from '../../src/errors.js';
import { createSelfSignedCertificate, issueCertificate, prepareIssuer } from '../../src/pki/certificate.js';
import { buildCrl } from '../../src/pki/crl.js';
import { parseCertificationRequest } from '../../src/pki/csr.js';
import { createCertificationRequest } from '../../src/pki/csr-builder.js';
import { algorithmIdentifier, bitString, NULL, octetString, sequence, tlv } from '../../src/pki/der.js';
import { checkPrivateKeyInfo, checkSubjectPublicKeyInfo } from '../../src/pki/key-check.js';
import {
  exportPkcs8Der,
  exportSpkiDer,
  generateKeyPair,
  importPkcs8Der,
  keyAlgorithmName,
} from '../../src/pki/keys.js';
import { buildCertId } from '../../src/pki/ocsp-request.js';
import { buildOcspResponse, prepareOcspResponder } from '../../src/pki/ocsp-response.js';
import {
  POST_QUANTUM_PARAMETER_SETS,
  type PostQuantumParameterSet,
  postQuantumByName,
} from '../../src/pki/post-quantum.js';
import { assertPostQuantumRuntime } from '../../src/pki/post-quantum-runtime.js';
import { signatureAlgorithmFor, signData, verifySignature } from '../../src/pki/signature.js';
import {
  asn1parses,
  nobleVerifies,
  ocspSignedParts,
  postQuantumSkip,
  printPostQuantumSkip,
  signedParts,
} from './post-quantum-support.js';

printPostQuantumSkip('post-quantum.test.ts');

function reasonOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (!isCertwrightError(e)) throw e;
    return e.reason;
  }
  return 'accepted';
}

const keyOf = (set: PostQuantumParameterSet) =>
  generateKeyPairSync(postQuantumByName(set)!.nodeType as 'ed25519') as {
    publicKey: KeyObject;
    privateKey: KeyObject;
  };

const DAY = 86_400_000;
const now = new Date(Math.floor(Date.now() / 1000) * 1000);
const validity = {
  notBefore: new Date(now.getTime() - 60_000),
  notAfter: new Date(now.getTime() + 30 * DAY),
};

describe('post-quantum parameter sets (RFC 9881, RFC 9909)', () => {
  it('names the NIST OIDs and FIPS 204/205 sizes (known answers)', () => {
    const row = (set: PostQuantumParameterSet) => {
      const p = postQuantumByName(set)!;
      return [p.oid, p.publicKeyBytes, p.signatureBytes];
    };
    expect(row('ML-DSA-44')).toEqual(['2.16.840.1.101.3.4.3.17', 1312, 2420]);
    expect(row('ML-DSA-65')).toEqual(['2.16.840.1.101.3.4.3.18', 1952, 3309]);
    expect(row('ML-DSA-87')).toEqual(['2.16.840.1.101.3.4.3.19', 2592, 4627]);
    expect(row('SLH-DSA-SHA2-128S')).toEqual(['2.16.840.1.101.3.4.3.20', 32, 7856]);
    expect(row('SLH-DSA-SHA2-256F')).toEqual(['2.16.840.1.101.3.4.3.25', 64, 49_856]);
    expect(row('SLH-DSA-SHAKE-128S')).toEqual(['2.16.840.1.101.3.4.3.26', 32, 7856]);
    expect(row('SLH-DSA-SHAKE-256F')).toEqual(['2.16.840.1.101.3.4.3.31', 64, 49_856]);
    // RFC 9881 §3: the AlgorithmIdentifier is the OID alone, parameters absent.
    expect(algorithmIdentifier(postQuantumByName('ML-DSA-44')!.oid).toString('hex')).toBe(
      '300b0609608648016503040311',
    );
    expect(algorithmIdentifier(postQuantumByName('SLH-DSA-SHA2-128S')!.oid).toString('hex')).toBe(
      '300b0609608648016503040314',
    );
  });

  it('reads SPKIs of exactly the right length and refuses other lengths and parameters, on any runtime', () => {
    for (const set of POST_QUANTUM_PARAMETER_SETS) {
      const p = postQuantumByName(set)!;
      const key = Buffer.alloc(p.publicKeyBytes, 0x5a);
      const spki = (alg: Buffer, k: Buffer) => sequence(alg, bitString(k));
      const family = set.startsWith('ML') ? 'ML-DSA' : 'SLH-DSA';
      expect(checkSubjectPublicKeyInfo(spki(algorithmIdentifier(p.oid), key))).toEqual({
        type: family,
        parameterSet: set,
      });
      for (const wrong of [key.subarray(1), Buffer.concat([key, Buffer.from([0])])])
        expect(reasonOf(() => checkSubjectPublicKeyInfo(spki(algorithmIdentifier(p.oid), wrong)))).toBe(
          'key_rejected',
        );
      expect(reasonOf(() => checkSubjectPublicKeyInfo(spki(algorithmIdentifier(p.oid, NULL), key)))).toBe(
        'key_rejected',
      );
    }
  });

  it('reads the three ML-DSA private key forms of RFC 9881 §6 and refuses wrong lengths', () => {
    const p = postQuantumByName('ML-DSA-65')!;
    const pkcs8 = (inner: Buffer) =>
      sequence(Buffer.from([0x02, 0x01, 0x00]), algorithmIdentifier(p.oid), octetString(inner));
    const seed = Buffer.alloc(32, 1);
    const expanded = Buffer.alloc(p.privateKeyBytes, 2);
    const described = { type: 'ML-DSA', parameterSet: 'ML-DSA-65' };
    expect(checkPrivateKeyInfo(pkcs8(tlv(0x80, seed)))).toEqual(described);
    expect(checkPrivateKeyInfo(pkcs8(octetString(expanded)))).toEqual(described);
    expect(checkPrivateKeyInfo(pkcs8(sequence(octetString(seed), octetString(expanded))))).toEqual(described);
    expect(reasonOf(() => checkPrivateKeyInfo(pkcs8(tlv(0x80, seed.subarray(1)))))).toBe('key_rejected');
    expect(reasonOf(() => checkPrivateKeyInfo(pkcs8(octetString(expanded.subarray(1)))))).toBe(
      'key_rejected',
    );
    expect(reasonOf(() => checkPrivateKeyInfo(pkcs8(sequence(octetString(seed)))))).toBe('malformed');
    const slh = postQuantumByName('SLH-DSA-SHA2-128S')!;
    const slhKey = (n: number) =>
      sequence(
        Buffer.from([0x02, 0x01, 0x00]),
        algorithmIdentifier(slh.oid),
        octetString(Buffer.alloc(n, 3)),
      );
    expect(checkPrivateKeyInfo(slhKey(64))).toEqual({ type: 'SLH-DSA', parameterSet: 'SLH-DSA-SHA2-128S' });
    expect(reasonOf(() => checkPrivateKeyInfo(slhKey(63)))).toBe('key_rejected');
  });

  it('refuses post-quantum keys on a runtime without them, naming the Node.js version needed', () => {
    const node20 = { supported: false, node: '20.19.0', openssl: '3.0.15+quic' };
    try {
      assertPostQuantumRuntime('a ML-DSA-65 key', 'key_algorithm', node20);
      expect.unreachable('refused');
    } catch (e) {
      expect(isCertwrightError(e) && e.reason).toBe('runtime_unsupported');
      expect((e as Error).message).toBe(
        'a ML-DSA-65 key needs Node.js 24 or later with OpenSSL 3.5 or later (this is Node.js 20.19.0 with OpenSSL 3.0.15+quic)',
      );
      expect(isCertwrightError(e) && e.fields[0]?.field).toBe('key_algorithm');
    }
  });

  it.runIf(postQuantumSkip !== undefined)(
    'on this runtime, generating or importing one is refused',
    async () => {
      await expect(generateKeyPair('ML-DSA-65')).rejects.toMatchObject({ reason: 'runtime_unsupported' });
      const p = postQuantumByName('ML-DSA-44')!;
      const spki = sequence(algorithmIdentifier(p.oid), bitString(Buffer.alloc(p.publicKeyBytes, 1)));
      const { importSpkiDer } = await import('../../src/pki/keys.js');
      expect(reasonOf(() => importSpkiDer(spki))).toBe('runtime_unsupported');
    },
  );
});

describe.skipIf(postQuantumSkip !== undefined)('post-quantum keys and signatures with node:crypto', () => {
  it('describes, exports, re-imports and signs with every parameter set; a signature verifies only as made', {
    timeout: 180_000,
  }, () => {
    const data = Buffer.from('certwright post-quantum');
    for (const set of POST_QUANTUM_PARAMETER_SETS) {
      const p = postQuantumByName(set)!;
      const { publicKey, privateKey } = keyOf(set);
      const spki = exportSpkiDer(publicKey);
      const description = checkSubjectPublicKeyInfo(spki);
      expect(keyAlgorithmName(description)).toBe(set);
      expect(keyAlgorithmName(checkPrivateKeyInfo(exportPkcs8Der(privateKey)))).toBe(set);
      expect(exportSpkiDer(importPkcs8Der(exportPkcs8Der(privateKey))).equals(spki)).toBe(true);
      const alg = signatureAlgorithmFor(privateKey);
      expect(alg).toMatchObject({ name: set, oid: p.oid, hash: null, mechanism: set });
      const signature = signData(alg, privateKey, data);
      expect(signature.length).toBe(p.signatureBytes);
      expect(verifySignature(p.oid, spki, data, signature)).toBe(true);
      expect(nobleVerifies({ tbs: data, set, parametersAbsent: true, signature }, spki)).toBe(true);
      expect(verifySignature(p.oid, spki, Buffer.from('other'), signature)).toBe(false);
      expect(verifySignature(p.oid, spki, data, signature.subarray(1))).toBe(false);
      const flipped = Buffer.from(signature);
      flipped[7]! ^= 1;
      expect(verifySignature(p.oid, spki, data, flipped)).toBe(false);
    }
  });

  it('derives from the RFC 9881 §6 seed form the key @noble/post-quantum derives (known answers for seed 00…1f)', async () => {
    const { ml_dsa44, ml_dsa65, ml_dsa87 } = await import('@noble/post-quantum/ml-dsa.js');
    const seed = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
    const cases = [
      ['ML-DSA-44', ml_dsa44, '837832708c5236d951581f1fddf2b79991b3424a0486d16da1ddad0fd69701be'],
      ['ML-DSA-65', ml_dsa65, 'b8b62131bfbe84433efb2273d7f5b87f7a22854a2cfd366fc2aead86d837c52d'],
      ['ML-DSA-87', ml_dsa87, '07e57c4f14dbad1267f621ec3777b4e2e6c4fbc4c22fbb87510ff8e0b3c6a642'],
    ] as const;
    for (const [set, noble, spkiSha256] of cases) {
      const p = postQuantumByName(set)!;
      const pkcs8 = sequence(
        Buffer.from([0x02, 0x01, 0x00]),
        algorithmIdentifier(p.oid),
        octetString(tlv(0x80, seed)),
      );
      const spki = exportSpkiDer(importPkcs8Der(pkcs8));
      expect(createHash('sha256').update(spki).digest('hex')).toBe(spkiSha256);
      expect(
        spki.subarray(spki.length - p.publicKeyBytes).equals(Buffer.from(noble.keygen(seed).publicKey)),
      ).toBe(true);
    }
  });

  it('refuses a signature of one parameter set over a key of another', () => {
    const mlDsa65 = keyOf('ML-DSA-65');
    const oid44 = postQuantumByName('ML-DSA-44')!.oid;
    expect(
      reasonOf(() =>
        verifySignature(oid44, exportSpkiDer(mlDsa65.publicKey), Buffer.alloc(1), Buffer.alloc(2420)),
      ),
    ).toBe('signature_algorithm_not_allowed');
  });

  it('verifies ML-DSA and SLH-DSA CSRs before anything is signed, and refuses a tampered one', () => {
    for (const set of ['ML-DSA-44', 'SLH-DSA-SHA2-128F'] as const) {
      const { privateKey } = keyOf(set);
      const der = createCertificationRequest({
        subject: [{ type: 'CN', value: 'pq.example.test' }],
        privateKey,
        subjectAltNames: [{ type: 'dns', value: 'pq.example.test' }],
      });
      asn1parses(der);
      const csr = parseCertificationRequest(der);
      expect(csr.signatureAlgorithm).toBe(set);
      expect(keyAlgorithmName(csr.publicKey)).toBe(set);
      expect(nobleVerifies(signedParts(der), csr.spki)).toBe(true);
      const tampered = Buffer.from(der);
      tampered[der.indexOf(Buffer.from('pq.example.test'))]! ^= 0x20;
      expect(reasonOf(() => parseCertificationRequest(tampered))).toBe('csr_signature_invalid');
    }
  });

  const chains: [
    string,
    PostQuantumParameterSet | 'EC',
    PostQuantumParameterSet | 'EC',
    PostQuantumParameterSet,
  ][] = [
    ['ML-DSA-65 root over an ECDSA intermediate', 'ML-DSA-65', 'EC', 'ML-DSA-44'],
    ['ECDSA root over an ML-DSA-87 intermediate', 'EC', 'ML-DSA-87', 'SLH-DSA-SHA2-128S'],
    [
      'SLH-DSA-SHAKE-128F root over an ML-DSA-44 intermediate',
      'SLH-DSA-SHAKE-128F',
      'ML-DSA-44',
      'ML-DSA-65',
    ],
  ];
  for (const [name, rootAlg, interAlg, leafAlg] of chains) {
    it(`issues a chain — ${name} — with CRL and OCSP, every post-quantum signature verified by @noble/post-quantum`, {
      timeout: 120_000,
    }, () => {
      const pair = (a: PostQuantumParameterSet | 'EC') =>
        a === 'EC' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : keyOf(a);
      const rootKey = pair(rootAlg);
      const interKey = pair(interAlg);
      const leafKey = pair(leafAlg);
      const root = createSelfSignedCertificate(
        {
          subject: [{ type: 'CN', value: 'PQ Root' }],
          ...validity,
          basicConstraints: { ca: true, pathLength: 1 },
        },
        rootKey.privateKey,
      );
      const rootCa = prepareIssuer(root.der, rootKey.privateKey);
      const inter = issueCertificate(
        {
          subject: [{ type: 'CN', value: 'PQ Issuing' }],
          publicKey: interKey.publicKey,
          ...validity,
          basicConstraints: { ca: true, pathLength: 0 },
        },
        rootCa,
      );
      const interCa = prepareIssuer(inter.der, interKey.privateKey);
      const leaf = issueCertificate(
        {
          subject: [{ type: 'CN', value: 'leaf.example.test' }],
          publicKey: leafKey.publicKey,
          subjectAltNames: [{ type: 'dns', value: 'leaf.example.test' }],
          ...validity,
        },
        interCa,
      );
      const crl = buildCrl({
        issuerCert: interCa.certificate,
        issuerKey: interKey.privateKey,
        thisUpdate: now,
        nextUpdate: new Date(now.getTime() + DAY),
        crlNumber: 7,
        entries: [{ serial: leaf.serialNumber, revokedAt: now, reason: 'keyCompromise' }],
      });
      const delta = buildCrl({
        issuerCert: interCa.certificate,
        issuerKey: interKey.privateKey,
        thisUpdate: now,
        nextUpdate: new Date(now.getTime() + DAY),
        crlNumber: 8,
        deltaBaseCrlNumber: 7n,
        entries: [],
      });
      const responderKey = pair(interAlg);
      const responderCert = issueCertificate(
        {
          subject: [{ type: 'CN', value: 'PQ OCSP' }],
          publicKey: responderKey.publicKey,
          ...validity,
          extendedKeyUsage: ['OCSPSigning'],
          ocspNoCheck: true,
        },
        interCa,
      );
      const ocsp = buildOcspResponse({
        responder: prepareOcspResponder(responderCert.der, responderKey.privateKey),
        producedAt: now,
        responses: [
          {
            certId: buildCertId(interCa.certificate, leaf.serialNumber, 'sha256'),
            certStatus: { status: 'revoked', revokedAt: now, reason: 'keyCompromise' },
            thisUpdate: now,
          },
        ],
      });

      const rootSpki = exportSpkiDer(rootKey.publicKey);
      const interSpki = exportSpkiDer(interKey.publicKey);
      const signed: [Uint8Array, ReturnType<typeof signedParts> | null, Uint8Array][] = [
        [root.der, rootAlg === 'EC' ? null : signedParts(root.der), rootSpki],
        [inter.der, rootAlg === 'EC' ? null : signedParts(inter.der), rootSpki],
        [leaf.der, interAlg === 'EC' ? null : signedParts(leaf.der), interSpki],
        [crl, interAlg === 'EC' ? null : signedParts(crl), interSpki],
        [delta, interAlg === 'EC' ? null : signedParts(delta), interSpki],
        [responderCert.der, interAlg === 'EC' ? null : signedParts(responderCert.der), interSpki],
        [ocsp, interAlg === 'EC' ? null : ocspSignedParts(ocsp), exportSpkiDer(responderKey.publicKey)],
      ];
      for (const [der, parts, issuerSpki] of signed) {
        expect(asn1parses(der)).toContain('SEQUENCE');
        if (!parts) continue;
        expect(parts.parametersAbsent).toBe(true);
        expect(nobleVerifies(parts, issuerSpki)).toBe(true);
        // The same bytes with one bit changed do not verify: the check is over the exact TBS.
        const tbs = Buffer.from(parts.tbs);
        tbs[tbs.length - 1]! ^= 1;
        expect(nobleVerifies({ ...parts, tbs }, issuerSpki)).toBe(false);
      }
      // OpenSSL 3.5 (node:crypto's X509Certificate) accepts the chain as well.
      const x = (der: Uint8Array) => new X509Certificate(der);
      expect(x(root.der).verify(x(root.der).publicKey)).toBe(true);
      expect(x(inter.der).verify(x(root.der).publicKey)).toBe(true);
      expect(x(leaf.der).verify(x(inter.der).publicKey)).toBe(true);
      expect(x(leaf.der).checkIssued(x(inter.der))).toBe(true);
    });
  }
});
