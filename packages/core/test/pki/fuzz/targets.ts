/**
 * The fuzz targets of core/pki: every parser of outside input, fed real seeds (the openssl-made
 * corpus next to this file) mutated — bit flips, truncations, length-field and tag edits,
 * insertions, cuts, splices from other seeds — and random DER trees. A target passes when every
 * input is either accepted or refused with a CertwrightError; anything else (a RangeError, a
 * TypeError, an OpenSSL error) is a finding. Used by `fuzz.test.ts` (short, in the test suite)
 * and `bench/fuzz.ts` (`pnpm bench fuzz`, ≥ 100,000 cases per target).
 */
import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { isCertwrightError } from '../../../src/errors.js';
import * as pki from '../../../src/pki/index.js';
import { checkPrivateKeyInfo, checkSubjectPublicKeyInfo } from '../../../src/pki/key-check.js';
import { chooseCa, readCaCertificates } from '../../../src/services/scep-probe/ca-certificates.js';
import {
  type FuzzTarget,
  mutated as mutatedFrom,
  mutatedText,
  randomDer,
} from '../../../src/testing/fuzz.js';

export type { FuzzTarget };

const { der: w, derReader: r } = pki;

// ---------------------------------------------------------------------------------------------
// Seeds

const CORPUS = new URL('./corpus/', import.meta.url);

function corpus(prefix: string): Buffer[] {
  return readdirSync(CORPUS)
    .filter((f) => f.startsWith(prefix) && f.endsWith('.der'))
    .sort()
    .map((f) => readFileSync(new URL(f, CORPUS)));
}

const corpusBy = (suffix: string): Buffer[] =>
  readdirSync(CORPUS)
    .filter((f) => f.endsWith(suffix))
    .sort()
    .map((f) => readFileSync(new URL(f, CORPUS)));

const seeds = {
  csr: corpus('csr-'),
  cert: corpus('cert-'),
  crl: corpus('crl-'),
  ocsp: corpus('ocsp-'),
  spki: corpusBy('.spki.der'),
  pkcs8: corpusBy('.pkcs8.der'),
};

const allDer = (): Buffer[] => [
  ...seeds.csr,
  ...seeds.cert,
  ...seeds.crl,
  ...seeds.ocsp,
  ...seeds.spki,
  ...seeds.pkcs8,
];

/** Seeds mutated, with splices drawn from every seed of the corpus. */
const mutated = (seedList: Buffer[]): fc.Arbitrary<Buffer> => mutatedFrom(seedList, allDer());

/** Runs of entries as storage keeps them: both Time forms, both extensions, long and short serials. */
const storedCrlEntries = (): Buffer[] => [
  Buffer.concat([
    pki.encodeCrlEntry({
      serial: 'ff'.repeat(20),
      revokedAt: new Date('2060-01-01T00:00:00Z'),
      reason: 'keyCompromise',
      invalidityDate: new Date('2001-01-01T00:00:00Z'),
    }),
    pki.encodeCrlEntry({ serial: '01', revokedAt: new Date('2020-01-01T00:00:00Z') }),
  ]),
  pki.encodeCrlEntry({ serial: '7f00', revokedAt: new Date('2030-05-05T05:05:05Z'), reason: 'superseded' }),
];

/** Values of the extensions found in the seeds (SAN, KU, EKU, BC, SKI, AKI, AIA, …). */
function extensionValues(): Buffer[] {
  const out: Buffer[] = [];
  for (const c of seeds.cert)
    for (const e of pki.readCertificate(c).extensions) out.push(Buffer.from(e.value));
  for (const c of seeds.csr)
    for (const e of pki.parseCertificationRequest(c).extensions) out.push(Buffer.from(e.value));
  return out;
}

/** Name DERs (issuer and subject) of the seed certificates and requests. */
function nameDers(): Buffer[] {
  const out: Buffer[] = [];
  for (const c of seeds.cert) {
    const info = pki.readCertificate(c);
    out.push(Buffer.from(info.subject.der), Buffer.from(info.issuer.der));
  }
  for (const c of seeds.csr) out.push(Buffer.from(pki.parseCertificationRequest(c).subject.der));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Targets

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const bytesTarget = (
  name: string,
  covers: string,
  inputs: fc.Arbitrary<Buffer>,
  run: (b: Buffer) => unknown,
): FuzzTarget<Buffer> => ({ name, covers, inputs, run, size: (b) => b.length, show: hex });

/** Calls `fn`, letting typed refusals pass: a reader that refuses is fine, one that crashes is not. */
function attempt(fn: () => unknown): void {
  try {
    fn();
  } catch (e) {
    if (!isCertwrightError(e)) throw e;
  }
}

/** Walks any DER value and applies every reader that fits each node's tag. */
function walkDer(buf: Uint8Array): void {
  r.assertDerBounds(buf, { maxBytes: 64 * 1024, maxNodes: 10_000, maxDepth: 24 }, 'fuzz input');
  const stack = [r.readRoot(buf)];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (r.isConstructed(node)) {
      stack.push(...r.children(buf, node));
      if (node.tag === w.Tag.SEQUENCE) {
        attempt(() => pki.decodeName(buf, node));
        attempt(() => pki.decodeExtensions(buf, node, 'fuzz'));
      }
      continue;
    }
    switch (node.tag) {
      case w.Tag.OID:
        attempt(() => r.readOid(buf, node));
        break;
      case w.Tag.INTEGER:
        attempt(() => r.readUnsignedInteger(buf, node, 'i'));
        attempt(() => r.readPositiveInteger(buf, node, 'i'));
        attempt(() => r.readSmallInteger(buf, node, 'i'));
        break;
      case w.Tag.UTC_TIME:
      case w.Tag.GENERALIZED_TIME:
        attempt(() => r.readTime(buf, node, 't'));
        break;
      case w.Tag.BIT_STRING:
        attempt(() => r.readBitStringBytes(buf, node, 'b'));
        break;
      default:
        if (node.tag >= 0x80) attempt(() => pki.decodeGeneralName(buf, node));
        else attempt(() => r.readString(buf, node, 's'));
    }
  }
}

const DN_FRAGMENTS = [
  'CN=',
  'O=',
  'OU=',
  'C=',
  'DC=',
  'E=',
  'serialNumber=',
  '2.5.4.3=',
  '1.2.840.113549.1.9.1=',
  'XX=',
  '=',
  ',',
  '+',
  '\\',
  '\\,',
  '\\2C',
  '\\c3\\a9',
  '\\zz',
  '#04',
  ' ',
  '"',
  'DE',
  'Germany',
  'é',
  '\u202e',
  '\u0000',
  '\ud800',
  'x'.repeat(70),
];
const PEM_FRAGMENTS = [
  '-----BEGIN CERTIFICATE-----\n',
  '-----END CERTIFICATE-----\n',
  '-----BEGIN ',
  '-----END ',
  '-----',
  'Proc-Type: 4,ENCRYPTED\n',
  '=',
  '==',
  '\r\n',
  '\n',
  ' ',
  'A',
  '+',
  '/',
  '*',
  'CERTIFICATE REQUEST',
  'X509 CRL',
  'bad label',
];

export function pkiTargets(): FuzzTarget<unknown>[] {
  const names = nameDers();
  const extValues = extensionValues();
  const dnTexts = [
    ...names.map((n) => pki.decodeName(n, r.readRoot(n)).text),
    'CN=a\\,b,OU=x+O=y,C=DE',
    'CN=\\#hash\\ ,O=\\"quoted\\"',
  ];
  const pemTexts = [
    ...seeds.cert.map((c) => pki.certificateToPem(c)),
    seeds.cert.map((c) => pki.certificateToPem(c)).join(''),
    ...seeds.csr.map((c) => pki.pemEncode('CERTIFICATE REQUEST', c)),
  ];
  const csrInputs = fc.oneof(
    { weight: 6, arbitrary: mutated(seeds.csr) as fc.Arbitrary<Buffer | string> },
    { weight: 1, arbitrary: mutated(seeds.csr).map((b) => pki.pemEncode('CERTIFICATE REQUEST', b)) },
    { weight: 1, arbitrary: mutated(seeds.csr).map((b) => b.toString('base64').replace(/.{64}/g, '$&\r\n')) },
    {
      weight: 1,
      arbitrary: mutatedText(
        seeds.csr.map((c) => pki.pemEncode('CERTIFICATE REQUEST', c)),
        PEM_FRAGMENTS,
      ),
    },
    { weight: 1, arbitrary: randomDer },
  );
  const dnArrays = fc.array(
    fc.oneof(
      fc.record({
        type: fc.oneof(
          fc.constantFrom('CN', 'O', 'C', 'DC', 'E', 'serialNumber', '2.5.4.3', '1.40', 'toString'),
          fc.string(),
        ),
        value: fc.string({ unit: 'binary', maxLength: 80 }),
      }),
      fc.array(fc.record({ type: fc.constantFrom('CN', 'OU', 'O'), value: fc.string() }), { maxLength: 3 }),
      fc.anything(),
    ),
    { maxLength: 8 },
  );
  return [
    bytesTarget(
      'der',
      'DER reader: bounds, TLV walk, OID/INTEGER/time/string/BIT STRING readers, names, extensions, GeneralNames',
      fc.oneof({ weight: 3, arbitrary: mutated(allDer()) }, { weight: 1, arbitrary: randomDer }),
      walkDer,
    ),
    bytesTarget(
      'name',
      'decodeName (X.501 Name DER) and formatName',
      fc.oneof({ weight: 4, arbitrary: mutated(names) }, { weight: 1, arbitrary: randomDer }),
      (b) => pki.decodeName(b, r.readRoot(b)),
    ),
    {
      name: 'name-text',
      covers: 'parseDistinguishedName / encodeName (RFC 4514 text and attribute lists)',
      inputs: fc.oneof(
        { weight: 3, arbitrary: mutatedText(dnTexts, DN_FRAGMENTS) as fc.Arbitrary<unknown> },
        { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(...DN_FRAGMENTS), maxLength: 40 }) },
        { weight: 1, arbitrary: dnArrays },
      ),
      run: (input: unknown) => pki.encodeName(input as pki.DistinguishedName),
      size: (input: unknown) =>
        typeof input === 'string' ? input.length : (JSON.stringify(input ?? null)?.length ?? 0),
      show: (input: unknown) => JSON.stringify(input),
    },
    bytesTarget(
      'scep-getcacert',
      'readCaCertificates / chooseCa (SCEP probe: PKCS#7 certs-only, DER, PEM answers)',
      fc.oneof(
        { weight: 3, arbitrary: mutated([...seeds.cert, pki.buildCertsOnly(seeds.cert)]) },
        {
          weight: 1,
          arbitrary: mutatedText(
            [
              seeds.cert.map((c) => pki.certificateToPem(c)).join(''),
              pki.pemEncode('PKCS7', pki.buildCertsOnly(seeds.cert)),
            ],
            PEM_FRAGMENTS,
          ).map((t) => Buffer.from(t, 'latin1')),
        },
        { weight: 1, arbitrary: randomDer },
      ),
      (b) => chooseCa(readCaCertificates(b)),
    ),
    {
      name: 'pem',
      covers: 'pemDecodeAll / pemDecode / pemDecodeCertificates / decodeBase64Strict',
      inputs: mutatedText(pemTexts, PEM_FRAGMENTS),
      run: (text: string) => {
        attempt(() => pki.pemDecode(text, 'CERTIFICATE'));
        return pki.pemDecodeCertificates(text);
      },
      size: (text: string) => text.length,
      show: (text: string) => JSON.stringify(text),
    },
    {
      name: 'csr',
      covers: 'parseCertificationRequest (DER, PEM, base64), key check, signature verification',
      inputs: csrInputs,
      run: (input: Buffer | string) => pki.parseCertificationRequest(input),
      size: (input: Buffer | string) => input.length,
      show: (input: Buffer | string) => (typeof input === 'string' ? JSON.stringify(input) : hex(input)),
    },
    bytesTarget(
      'certificate',
      'readCertificate (bounds, names, validity, key check, extensions)',
      fc.oneof(
        { weight: 6, arbitrary: mutated([...seeds.cert, ...seeds.crl]) },
        { weight: 1, arbitrary: randomDer },
      ),
      (b) => pki.readCertificate(b),
    ),
    bytesTarget(
      'certificate-details',
      'describeCertificate: the decoded view (SAN forms, CDP, AIA, policies, AKI, version)',
      fc.oneof({ weight: 6, arbitrary: mutated(seeds.cert) }, { weight: 1, arbitrary: randomDer }),
      (b) => pki.describeCertificate(b),
    ),
    bytesTarget(
      'scep-request',
      'parseScepRequest (SCEP attributes, signer certificate) and the signer verification',
      fc.oneof(
        {
          weight: 6,
          arbitrary: mutated([
            readFileSync(new URL('../cms/fixtures/scepclient-2.1-pkcsreq.der', import.meta.url)),
          ]),
        },
        { weight: 1, arbitrary: randomDer },
      ),
      (b) => {
        const request = pki.parseScepRequest(b);
        return pki.verifySignerInfo(request.signedData, request.signer, request.signerCertificate);
      },
    ),
    bytesTarget(
      'ocsp-request',
      'parseOcspRequest (CertIDs, nonce, signed requests)',
      fc.oneof({ weight: 6, arbitrary: mutated(seeds.ocsp) }, { weight: 1, arbitrary: randomDer }),
      (b) => pki.parseOcspRequest(b),
    ),
    bytesTarget(
      'key',
      'checkSubjectPublicKeyInfo, checkPrivateKeyInfo, importSpkiDer, importPkcs8Der',
      fc.oneof(
        { weight: 6, arbitrary: mutated([...seeds.spki, ...seeds.pkcs8]) },
        { weight: 1, arbitrary: randomDer },
      ),
      (b) => {
        attempt(() => checkSubjectPublicKeyInfo(b));
        attempt(() => checkPrivateKeyInfo(b));
        attempt(() => pki.importSpkiDer(b));
        return pki.importPkcs8Der(b);
      },
    ),
    bytesTarget(
      'extensions',
      'decoders of SAN, key usage, EKU, basic constraints, SKI, AKI, CDP, AIA, policies',
      fc.oneof({ weight: 6, arbitrary: mutated(extValues) }, { weight: 1, arbitrary: randomDer }),
      (b) => {
        attempt(() => pki.decodeSubjectAltName(b));
        attempt(() => pki.decodeKeyUsage(b));
        attempt(() => pki.decodeExtKeyUsage(b));
        attempt(() => pki.decodeBasicConstraints(b));
        attempt(() => pki.decodeAuthorityKeyIdentifier(b));
        attempt(() => pki.decodeCrlDistributionPoints(b));
        attempt(() => pki.decodeAuthorityInfoAccess(b));
        attempt(() => pki.decodeCertificatePolicies(b));
        return pki.decodeSubjectKeyIdentifier(b);
      },
    ),
    {
      name: 'der-writer',
      covers: 'DER writer on caller values: oid, integer, enumerated, times, encodeName, SAN/EKU encoders',
      inputs: fc.oneof(
        fc.record({ oid: fc.oneof(fc.string(), fc.constantFrom('1.40', '2.999', '0.0', '3.1', '1.2.')) }),
        fc.record({ integer: fc.oneof(fc.integer(), fc.double(), fc.bigInt(), fc.constant(Number.NaN)) }),
        fc.record({ date: fc.date({ noInvalidDate: false }) }),
        fc.record({
          san: fc.record({
            type: fc.constantFrom('dns', 'ip', 'email', 'uri', 'other'),
            value: fc.string({ maxLength: 300 }),
          }),
        }),
        fc.record({
          eku: fc.array(fc.oneof(fc.string(), fc.constantFrom('serverAuth', 'constructor', '__proto__')), {
            maxLength: 4,
          }),
        }),
        fc.record({ name: dnArrays }),
      ),
      run: (input: Record<string, unknown>) => {
        if ('oid' in input) return w.oid(input.oid as string);
        if ('integer' in input) {
          attempt(() => w.enumerated(Number(input.integer)));
          return w.integer(input.integer as number | bigint);
        }
        if ('date' in input) {
          attempt(() => w.utcTime(input.date as Date));
          attempt(() => w.generalizedTime(input.date as Date));
          return w.time(input.date as Date);
        }
        if ('san' in input) return pki.subjectAltNameValue([input.san as pki.SubjectAltName]);
        if ('eku' in input) return pki.extKeyUsageValue(input.eku as string[]);
        return pki.encodeName(input.name as pki.DistinguishedName);
      },
      size: (input: Record<string, unknown>) =>
        JSON.stringify(input, (_, v) => (typeof v === 'bigint' ? String(v) : v))?.length ?? 0,
      show: (input: Record<string, unknown>) =>
        JSON.stringify(input, (_, v) => (typeof v === 'bigint' ? `${v}n` : v)),
    },
    // Appended last: the short campaign seeds each target by its position.
    bytesTarget(
      'crl-stored-entries',
      'checkEncodedEntries (stored CRL entry DER, checked before it is signed into a CRL)',
      fc.oneof({ weight: 4, arbitrary: mutated(storedCrlEntries()) }, { weight: 1, arbitrary: randomDer }),
      (b) => pki.checkEncodedEntries(b),
    ),
  ] as FuzzTarget<unknown>[];
}
