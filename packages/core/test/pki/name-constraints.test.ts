import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCertwrightError } from '../../src/errors.js';
import {
  certificateToPem,
  createSelfSignedCertificate,
  generateKeyPair,
  issueCertificate,
  nameConstraintsExtension,
  nameConstraintsValue,
  prepareIssuer,
  type SubjectAltName,
} from '../../src/pki/index.js';
import { openssl, workdir } from './openssl.js';

const DAY = 86_400_000;

describe('nameConstraints writer (RFC 5280 §4.2.1.10)', () => {
  let work: Awaited<ReturnType<typeof workdir>>;
  let caPath: string;
  let issuer: ReturnType<typeof prepareIssuer>;

  beforeAll(async () => {
    work = await workdir();
    const key = await generateKeyPair('ECDSA-P256');
    const now = Date.now();
    const ca = createSelfSignedCertificate(
      {
        subject: 'CN=constrained test CA',
        notBefore: new Date(now - 60_000),
        notAfter: new Date(now + 10 * DAY),
        basicConstraints: { ca: true, pathLength: 0 },
        extraExtensions: [
          nameConstraintsExtension({
            permitted: [
              { type: 'dns', value: 'localhost' },
              { type: 'ip', value: '127.0.0.1/32' },
              { type: 'ip', value: '::1/128' },
            ],
            excluded: [{ type: 'dns', value: '.evil.localhost' }],
          }),
        ],
      },
      key.privateKey,
    );
    caPath = await work.file('ca.pem', certificateToPem(ca.der));
    issuer = prepareIssuer(ca.der, key.privateKey);
  });
  afterAll(() => work.cleanup());

  it('writes a critical extension that openssl reads back name by name', async () => {
    const text = await openssl(['x509', '-in', caPath, '-noout', '-text']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/X509v3 Name Constraints: critical/);
    expect(text.stdout).toMatch(
      /Permitted:\s+DNS:localhost\s+IP:127\.0\.0\.1\/255\.255\.255\.255\s+IP:0:0:0:0:0:0:0:1\/FFFF/,
    );
    expect(text.stdout).toMatch(/Excluded:\s+DNS:\.evil\.localhost/);
  });

  const leafFor = async (name: string, sans: SubjectAltName[]) => {
    const key = await generateKeyPair('ECDSA-P256');
    const now = Date.now();
    const leaf = issueCertificate(
      {
        subject: `CN=${name}`,
        publicKey: key.publicKey,
        notBefore: new Date(now - 60_000),
        notAfter: new Date(now + DAY),
        subjectAltNames: sans,
        extendedKeyUsage: ['serverAuth'],
      },
      issuer,
    );
    return work.file(`${name}.pem`, certificateToPem(leaf.der));
  };

  it('lets openssl verify a leaf for a permitted name and refuse one for any other name', async () => {
    const ok = await leafFor('localhost', [
      { type: 'dns', value: 'localhost' },
      { type: 'ip', value: '127.0.0.1' },
      { type: 'ip', value: '::1' },
    ]);
    expect((await openssl(['verify', '-x509_strict', '-CAfile', caPath, ok])).code).toBe(0);

    for (const [name, sans] of [
      ['example.com', [{ type: 'dns', value: 'example.com' }]],
      ['lan-ip', [{ type: 'ip', value: '192.168.1.10' }]],
      [
        'mixed',
        [
          { type: 'dns', value: 'localhost' },
          { type: 'dns', value: 'bank.example' },
        ],
      ],
      ['excluded', [{ type: 'dns', value: 'www.evil.localhost' }]],
    ] as [string, SubjectAltName[]][]) {
      const verdict = await openssl(['verify', '-x509_strict', '-CAfile', caPath, await leafFor(name, sans)]);
      expect(verdict.code, name).not.toBe(0);
      expect(`${verdict.stdout}${verdict.stderr}`, name).toMatch(
        /name constraint|excluded subtree|permitted subtree/i,
      );
    }
  });

  it('encodes IPv4 and IPv6 ranges as address and mask, and clears host bits', () => {
    const value = nameConstraintsValue({ permitted: [{ type: 'ip', value: '10.1.2.3/8' }] });
    // SEQUENCE { [0] { SEQUENCE { [7] 0a000000 ff000000 } } }
    expect(value.toString('hex')).toBe('300ea00c300a87080a000000ff000000');
  });

  it('refuses empty constraints and malformed names with typed errors', () => {
    for (const bad of [
      {},
      { permitted: [{ type: 'dns', value: 'bad name' }] },
      { permitted: [{ type: 'dns', value: '*.example.com' }] },
      { permitted: [{ type: 'ip', value: '127.0.0.1' }] },
      { permitted: [{ type: 'ip', value: '127.0.0.1/33' }] },
      { permitted: [{ type: 'ip', value: 'localhost/8' }] },
      { permitted: [{ type: 'email', value: 'a@b' }] },
    ]) {
      let caught: unknown;
      try {
        nameConstraintsValue(bad as never);
      } catch (error) {
        caught = error;
      }
      expect(isCertwrightError(caught) && caught.reason, JSON.stringify(bad)).toBe('invalid_input');
    }
  });
});
