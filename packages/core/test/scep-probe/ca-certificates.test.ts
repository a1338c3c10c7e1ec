import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { isCertwrightError } from '../../src/errors.js';
import {
  certificateToPem,
  createSelfSignedCertificate,
  issueCertificate,
  prepareIssuer,
} from '../../src/pki/certificate.js';
import { buildCertsOnly } from '../../src/pki/cms/signed-data.js';
import { generateKeyPair, type KeyAlgorithm } from '../../src/pki/keys.js';
import { pemEncode } from '../../src/pki/pem.js';
import {
  type CertificateSummary,
  chooseCa,
  readCaCertificates,
  summarizeCertificate,
} from '../../src/services/scep-probe/ca-certificates.js';
import { capabilityFlags, parseCapabilities } from '../../src/services/scep-probe/capabilities.js';
import { mutated, mutatedText, randomDer, typedOnly } from '../../src/testing/fuzz.js';

/**
 * GetCACert and GetCACaps answers are bytes a SCEP server (anyone a user names) chooses. Their
 * readers describe what is there — any key, any size, DER, BER PKCS#7 or PEM — and refuse the
 * rest only with typed errors.
 */

const YEAR = 365 * 86_400_000;
const now = Date.now();

async function selfSigned(alg: KeyAlgorithm, subject: string, ca: boolean) {
  const keys = await generateKeyPair(alg);
  const cert = createSelfSignedCertificate(
    {
      subject,
      notBefore: new Date(now - YEAR),
      notAfter: new Date(now + 3 * YEAR),
      basicConstraints: { ca },
    },
    keys.privateKey,
  );
  return { der: cert.der, key: keys.privateKey };
}

/** A certificate made by the openssl CLI for a key certwright's own builder does not sign with. */
function opensslCertificate(keyPem: string, subject: string): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'cw-scep-probe-'));
  try {
    writeFileSync(join(dir, 'k.pem'), keyPem);
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-key',
        'k.pem',
        '-subj',
        subject,
        '-days',
        '30',
        '-outform',
        'DER',
        '-out',
        'c.der',
        '-addext',
        'basicConstraints=critical,CA:TRUE',
      ],
      { cwd: dir, stdio: 'pipe' },
    );
    return readFileSync(join(dir, 'c.der'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let root: { der: Buffer; key: import('node:crypto').KeyObject };
let intermediate: Buffer;
let ra: Buffer;
let seeds: Buffer[];

beforeAll(async () => {
  root = await selfSigned('RSA-2048', 'CN=Probe Root', true);
  const intKeys = await generateKeyPair('ECDSA-P384');
  intermediate = issueCertificate(
    {
      subject: 'CN=Probe Issuing CA',
      publicKey: intKeys.publicKey,
      notBefore: new Date(now - YEAR),
      notAfter: new Date(now + 2 * YEAR),
      basicConstraints: { ca: true, pathLength: 0 },
    },
    prepareIssuer(root.der, root.key),
  ).der;
  const raKeys = await generateKeyPair('RSA-2048');
  ra = issueCertificate(
    {
      subject: 'CN=Probe RA',
      publicKey: raKeys.publicKey,
      notBefore: new Date(now - YEAR),
      notAfter: new Date(now + YEAR),
    },
    prepareIssuer(intermediate, intKeys.privateKey),
  ).der;
  seeds = [root.der, buildCertsOnly([ra, intermediate, root.der]), buildCertsOnly([intermediate])];
}, 120_000);

const subjects = (chain: CertificateSummary[]) => chain.map((c) => c.subject);

describe('the key algorithm text', () => {
  it.each([
    ['RSA-2048', 'RSA 2048'],
    ['RSA-3072', 'RSA 3072'],
    ['ECDSA-P256', 'ECDSA P-256'],
    ['ECDSA-P384', 'ECDSA P-384'],
    ['Ed25519', 'Ed25519'],
  ] as const)('describes %s as "%s"', async (alg, text) => {
    const { der } = await selfSigned(alg, `CN=${alg}`, true);
    expect(summarizeCertificate(der).keyAlgorithm).toBe(text);
  });

  it('describes DSA and weak RSA keys, which the inventory would refuse, instead of refusing them', () => {
    const dsa = generateKeyPairSync('dsa', { modulusLength: 2048, divisorLength: 256 });
    const dsaCert = opensslCertificate(
      dsa.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
      '/CN=DSA CA',
    );
    expect(summarizeCertificate(dsaCert)).toMatchObject({
      keyAlgorithm: 'DSA 2048',
      isCa: true,
      subject: 'CN=DSA CA',
    });

    const weak = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const weakCert = opensslCertificate(
      weak.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
      '/CN=Weak CA',
    );
    expect(summarizeCertificate(weakCert).keyAlgorithm).toBe('RSA 1024');
  });
});

describe('reading a GetCACert answer', () => {
  it('reads one DER certificate, PKCS#7 certificates-only and PEM of either', () => {
    expect(subjects(readCaCertificates(root.der))).toEqual(['CN=Probe Root']);
    const p7 = buildCertsOnly([ra, intermediate]);
    expect(subjects(readCaCertificates(p7))).toEqual(['CN=Probe RA', 'CN=Probe Issuing CA']);
    expect(subjects(readCaCertificates(Buffer.from(certificateToPem(root.der))))).toEqual(['CN=Probe Root']);
    const bundle = certificateToPem(intermediate) + certificateToPem(root.der);
    expect(subjects(readCaCertificates(Buffer.from(`\r\n${bundle}`)))).toEqual([
      'CN=Probe Issuing CA',
      'CN=Probe Root',
    ]);
    expect(subjects(readCaCertificates(Buffer.from(pemEncode('PKCS7', p7))))).toEqual([
      'CN=Probe RA',
      'CN=Probe Issuing CA',
    ]);
  });

  it('reads PKCS#7 written in BER with indefinite lengths, as old servers send it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cw-scep-probe-'));
    try {
      writeFileSync(join(dir, 'c.pem'), certificateToPem(intermediate));
      execFileSync(
        'openssl',
        ['crl2pkcs7', '-nocrl', '-certfile', 'c.pem', '-outform', 'DER', '-out', 'p7.der'],
        { cwd: dir },
      );
      const der = readFileSync(join(dir, 'p7.der'));
      expect(subjects(readCaCertificates(der))).toEqual(['CN=Probe Issuing CA']);
      // The same structure with every SEQUENCE and [0] re-encoded with an indefinite length.
      const ber = toIndefinite(der);
      expect(ber.length).toBeGreaterThan(der.length);
      expect(subjects(readCaCertificates(ber))).toEqual(['CN=Probe Issuing CA']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses what holds no certificate with typed errors', () => {
    const refusal = (body: Uint8Array) => {
      try {
        readCaCertificates(body);
        return 'accepted';
      } catch (error) {
        return isCertwrightError(error) ? error.reason : error;
      }
    };
    expect(refusal(new Uint8Array(0))).toBe('malformed');
    expect(refusal(Buffer.from('<html><body>404</body></html>'))).toBe('malformed');
    expect(refusal(buildCertsOnly([]))).toBe('malformed');
    expect(refusal(Buffer.from('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n'))).toBe(
      'malformed',
    );
    expect(refusal(Buffer.concat([root.der, Buffer.from([0])]))).toBe('malformed');
    expect(refusal(buildCertsOnly(Array.from({ length: 33 }, () => root.der)))).toBe('too_large');
  });
});

describe('choosing the CA of a chain', () => {
  const read = (...ders: Buffer[]) => readCaCertificates(buildCertsOnly(ders));

  it('takes the cA certificate that issued the RA certificate, wherever it stands', () => {
    expect(chooseCa(read(ra, intermediate, root.der)).subject).toBe('CN=Probe Issuing CA');
    expect(chooseCa(read(root.der, intermediate, ra)).subject).toBe('CN=Probe Issuing CA');
  });

  it('takes the bottom of a CA chain sent without an RA certificate', () => {
    expect(chooseCa(read(root.der, intermediate)).subject).toBe('CN=Probe Issuing CA');
    expect(chooseCa(read(intermediate, root.der)).subject).toBe('CN=Probe Issuing CA');
  });

  it('takes a lone certificate without basicConstraints, and of several the self-issued one', async () => {
    const old = await selfSigned('RSA-2048', 'CN=Old CA', false);
    expect(chooseCa(readCaCertificates(old.der)).subject).toBe('CN=Old CA');
    expect(chooseCa(read(ra, old.der)).subject).toBe('CN=Old CA');
  });
});

describe('reading a GetCACaps answer', () => {
  it('keeps the keywords as sent and sets the flags, SCEPStandard implying AES, POST and SHA-256', () => {
    const caps = parseCapabilities(Buffer.from('SCEPStandard\r\nRenewal\r\n\r\n  SHA-512 \nrenewal\n'));
    expect(caps).toEqual(['SCEPStandard', 'Renewal', 'SHA-512']);
    expect(capabilityFlags(caps)).toEqual({
      supports_rfc8894: true,
      supports_aes: true,
      supports_post: true,
      supports_renewal: true,
      supports_sha256: true,
      supports_sha512: true,
    });
    expect(capabilityFlags(parseCapabilities(Buffer.from('DES3\nSHA-1\nGetNextCACert')))).toEqual({
      supports_rfc8894: false,
      supports_aes: false,
      supports_post: false,
      supports_renewal: false,
      supports_sha256: false,
      supports_sha512: false,
    });
  });

  it('keeps nothing of an HTML error page or binary, and at most 64 keywords', () => {
    expect(parseCapabilities(Buffer.from('<html>\n<body>Not Found</body>\n</html>'))).toEqual([]);
    expect(parseCapabilities(Buffer.from([0, 1, 2, 0xff, 0x0a, 0x80]))).toEqual([]);
    const many = Array.from({ length: 100 }, (_, i) => `Cap${i}`).join('\n');
    expect(parseCapabilities(Buffer.from(many))).toHaveLength(64);
  });
});

describe('the GetCACert reader over untrusted bytes', () => {
  it('throws only typed errors for mutated chains, random DER and mutated PEM', { timeout: 120_000 }, () => {
    const pems = [certificateToPem(root.der), pemEncode('PKCS7', seeds[1]!)];
    const inputs = fc.oneof(
      mutated(seeds),
      randomDer,
      mutatedText(pems, [
        '-----BEGIN ',
        '-----END ',
        'PKCS7-----',
        'CERTIFICATE-----',
        '\n',
        '=',
        'A',
        ':',
      ]).map((t) => Buffer.from(t, 'latin1')),
    );
    fc.assert(
      typedOnly({
        name: 'readCaCertificates',
        covers: 'GetCACert answers',
        inputs,
        run: (body: Uint8Array) => chooseCa(readCaCertificates(body)),
        size: (body: Uint8Array) => body.length,
        show: (body: Uint8Array) => Buffer.from(body).toString('hex'),
      }),
      { seed: 0x5cef, numRuns: 600 },
    );
  });

  it('throws nothing at all for any GetCACaps body', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 4096 }), (body) => {
        capabilityFlags(parseCapabilities(body));
      }),
      { seed: 0x5cec, numRuns: 400 },
    );
  });
});

/** Re-encodes every constructed node (SEQUENCE, SET, context [n]) with an indefinite length. */
function toIndefinite(der: Uint8Array): Buffer {
  const out: number[] = [];
  const walk = (start: number, end: number) => {
    let at = start;
    while (at < end) {
      const tag = der[at]!;
      const first = der[at + 1]!;
      const lengthOctets = first < 0x80 ? 0 : first & 0x7f;
      let length = first < 0x80 ? first : 0;
      for (let i = 0; i < lengthOctets; i++) length = length * 256 + der[at + 2 + i]!;
      const contentStart = at + 2 + lengthOctets;
      const contentEnd = contentStart + length;
      if ((tag & 0x20) !== 0) {
        out.push(tag, 0x80);
        walk(contentStart, contentEnd);
        out.push(0, 0);
      } else {
        for (let i = at; i < contentEnd; i++) out.push(der[i]!);
      }
      at = contentEnd;
    }
  };
  walk(0, der.length);
  return Buffer.from(out);
}
