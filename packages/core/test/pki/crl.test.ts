import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildCrl,
  type CrlEntry,
  certificateToPem,
  crlToPem,
  encodeCrlEntry,
  pemDecode,
} from '../../src/pki/index.js';
import { days, type Hierarchy, issueLeaf, makeHierarchy } from './fixtures.js';
import { openssl, workdir } from './openssl.js';

let w: Awaited<ReturnType<typeof workdir>>;
beforeAll(async () => {
  w = await workdir();
});
afterAll(async () => {
  await w.cleanup();
});

/** `stored`: the entries reach buildCrl as stored DER (encodeCrlEntry), in blocks of 7. */
async function scenario(h: Hierarchy, tag: string, bulk: number, stored = false) {
  const revoked = await issueLeaf(h.intermediate, 'ECDSA-P256');
  const good = await issueLeaf(h.intermediate, 'ECDSA-P256');
  const entries: CrlEntry[] = [
    {
      serial: revoked.serialNumber,
      revokedAt: days(-0.5),
      reason: 'keyCompromise',
      invalidityDate: days(-2),
    },
  ];
  for (let i = 0; i < bulk; i++) {
    entries.push({
      serial: randomBytes(16).toString('hex'),
      revokedAt: days(-i / 1000),
      reason: i % 3 === 0 ? 'unspecified' : i % 3 === 1 ? 'superseded' : 'cessationOfOperation',
    });
  }
  const der = buildCrl({
    issuerCert: h.intermediate.der,
    issuerKey: h.intermediate.key,
    thisUpdate: days(0),
    nextUpdate: days(1),
    crlNumber: 42,
    ...(stored
      ? {
          encodedEntries: Array.from({ length: Math.ceil(entries.length / 7) }, (_, i) =>
            Buffer.concat(entries.slice(i * 7, i * 7 + 7).map((e) => encodeCrlEntry(e))),
          ),
        }
      : { entries }),
  });
  const chain = await w.file(
    `${tag}-chain.pem`,
    certificateToPem(h.intermediate.der) + certificateToPem(h.root.der),
  );
  const root = await w.file(`${tag}-root.pem`, certificateToPem(h.root.der));
  const inter = await w.file(`${tag}-int.pem`, certificateToPem(h.intermediate.der));
  return {
    der,
    chain,
    root,
    inter,
    crlDer: await w.file(`${tag}.crl`, der),
    crlPem: await w.file(`${tag}.crl.pem`, crlToPem(der)),
    revoked: await w.file(`${tag}-revoked.pem`, certificateToPem(revoked.der)),
    good: await w.file(`${tag}-good.pem`, certificateToPem(good.der)),
    revokedSerial: revoked.serialNumber,
  };
}

describe('CRL builder, verified by openssl', () => {
  for (const alg of ['ECDSA-P256', 'RSA-2048', 'Ed25519'] as const) {
    it(`writes a CRL that openssl crl verifies and verify -crl_check applies (${alg} CA)`, async () => {
      const h = await makeHierarchy(alg, `crl-${alg}`);
      const s = await scenario(h, alg, 20);
      const v = await openssl(['crl', '-inform', 'DER', '-in', s.crlDer, '-CAfile', s.chain, '-noout']);
      expect(v.stderr).toContain('verify OK');
      expect(v.code).toBe(0);

      const revoked = await openssl([
        'verify',
        '-crl_check',
        '-CAfile',
        s.root,
        '-untrusted',
        s.inter,
        '-CRLfile',
        s.crlPem,
        s.revoked,
      ]);
      expect(revoked.code).not.toBe(0);
      expect(revoked.stdout + revoked.stderr).toContain('certificate revoked');
      const good = await openssl([
        'verify',
        '-crl_check',
        '-CAfile',
        s.root,
        '-untrusted',
        s.inter,
        '-CRLfile',
        s.crlPem,
        s.good,
      ]);
      expect(good.stdout.trim()).toBe(`${s.good}: OK`);
    }, 60_000);
  }

  it('writes CRL number, AKI, reason codes (none for unspecified) and invalidity dates', async () => {
    const h = await makeHierarchy('ECDSA-P384', 'crl-text');
    const s = await scenario(h, 'text', 3);
    const t = (await openssl(['crl', '-inform', 'DER', '-in', s.crlDer, '-noout', '-text'])).stdout;
    expect(t).toMatch(/X509v3 CRL Number:\s+42/);
    expect(t).toContain('X509v3 Authority Key Identifier');
    expect(t).toContain('Version 2');
    expect(t).toMatch(
      new RegExp(
        `Serial Number: 0*${s.revokedSerial.toUpperCase()}\\s+Revocation Date: .*\\s+CRL entry extensions:\\s+X509v3 CRL Reason Code:\\s+Key Compromise\\s+Invalidity Date:`,
      ),
    );
    expect(t).toContain('Superseded');
    expect(t).toContain('Cessation Of Operation');
    expect(t).not.toContain('Unspecified');
    // Entry 0 of the bulk set is `unspecified`: it must carry no entry extensions at all.
    const entries = t.split('Serial Number:').slice(1);
    expect(entries).toHaveLength(4);
    expect(entries.filter((e) => !e.includes('CRL entry extensions'))).toHaveLength(1);
  }, 30_000);

  it('writes a CRL from stored entry DER that openssl verifies, lists and applies', async () => {
    const h = await makeHierarchy('ECDSA-P256', 'crl-stored');
    const s = await scenario(h, 'stored', 30, true);
    const v = await openssl(['crl', '-inform', 'DER', '-in', s.crlDer, '-CAfile', s.chain, '-noout']);
    expect(v.stderr).toContain('verify OK');
    const t = (await openssl(['crl', '-inform', 'DER', '-in', s.crlDer, '-noout', '-text'])).stdout;
    expect(t.split('Serial Number:').length - 1).toBe(31);
    expect(t).toMatch(
      new RegExp(
        `Serial Number: 0*${s.revokedSerial.toUpperCase()}\\s+Revocation Date: .*\\s+CRL entry extensions:\\s+X509v3 CRL Reason Code:\\s+Key Compromise\\s+Invalidity Date:`,
      ),
    );
    const revoked = await openssl([
      'verify',
      '-crl_check',
      '-CAfile',
      s.root,
      '-untrusted',
      s.inter,
      '-CRLfile',
      s.crlPem,
      s.revoked,
    ]);
    expect(revoked.stdout + revoked.stderr).toContain('certificate revoked');
  }, 30_000);

  it('handles 10,000 entries and an empty CRL', async () => {
    const h = await makeHierarchy('ECDSA-P256', 'crl-big');
    const s = await scenario(h, 'big', 10_000);
    const v = await openssl(['crl', '-inform', 'DER', '-in', s.crlDer, '-CAfile', s.chain, '-noout']);
    expect(v.stderr).toContain('verify OK');
    const t = (await openssl(['crl', '-inform', 'DER', '-in', s.crlDer, '-noout', '-text'])).stdout;
    expect(t.split('Serial Number:').length - 1).toBe(10_001);
    const revoked = await openssl([
      'verify',
      '-crl_check',
      '-CAfile',
      s.root,
      '-untrusted',
      s.inter,
      '-CRLfile',
      s.crlPem,
      s.revoked,
    ]);
    expect(revoked.stdout + revoked.stderr).toContain('certificate revoked');

    const empty = buildCrl({
      issuerCert: h.intermediate.der,
      issuerKey: h.intermediate.key,
      thisUpdate: days(0),
      nextUpdate: days(7),
      crlNumber: 1n,
      entries: [],
    });
    const e = await openssl([
      'crl',
      '-inform',
      'DER',
      '-in',
      await w.file('empty.crl', empty),
      '-CAfile',
      s.chain,
      '-noout',
      '-text',
    ]);
    expect(e.stderr).toContain('verify OK');
    expect(e.stdout).toContain('No Revoked Certificates');
  }, 60_000);

  it('writes entry dates from 2050 on as GeneralizedTime and keeps serials with a high bit positive', async () => {
    const h = await makeHierarchy('ECDSA-P256', 'crl-dates');
    const der = buildCrl({
      issuerCert: h.intermediate.der,
      issuerKey: h.intermediate.key,
      thisUpdate: days(0),
      nextUpdate: days(1),
      crlNumber: 2n ** 64n,
      entries: [
        { serial: 'ff01', revokedAt: new Date('2051-03-04T05:06:07Z'), reason: 'privilegeWithdrawn' },
        {
          serial: Buffer.from('000a', 'hex'),
          revokedAt: new Date('1999-12-31T23:59:59Z'),
          reason: 'aACompromise',
        },
        { serial: '0', revokedAt: new Date('2020-01-01T00:00:00Z'), reason: 'removeFromCRL' },
      ],
    });
    const r = await openssl([
      'crl',
      '-inform',
      'DER',
      '-in',
      await w.file('dates.crl', der),
      '-noout',
      '-text',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Serial Number: FF01\s+Revocation Date: Mar {2}4 05:06:07 2051 GMT/);
    expect(r.stdout).toMatch(/Serial Number: 0A\s+Revocation Date: Dec 31 23:59:59 1999 GMT/);
    expect(r.stdout).toMatch(/Serial Number: 00\s+Revocation Date: Jan {2}1 00:00:00 2020 GMT/);
    expect(r.stdout).toContain('Privilege Withdrawn');
    expect(r.stdout).toContain('AA Compromise');
    expect(r.stdout).toContain('Remove From CRL');
    expect(r.stdout).toMatch(/X509v3 CRL Number:\s+18446744073709551616/);
    // The DER INTEGER for ff01 carries a leading zero octet: 02 03 00 ff 01.
    expect(der.includes(Buffer.from('020300ff01', 'hex'))).toBe(true);
  }, 30_000);

  it('encodes PEM with the X509 CRL label and refuses inconsistent input', async () => {
    const h = await makeHierarchy('ECDSA-P256', 'crl-pem');
    const der = buildCrl({
      issuerCert: h.intermediate.der,
      issuerKey: h.intermediate.key,
      thisUpdate: days(0),
      nextUpdate: days(1),
      crlNumber: 7,
      entries: [{ serial: '0abc', revokedAt: days(-1) }],
    });
    const pem = crlToPem(der);
    expect(pem.startsWith('-----BEGIN X509 CRL-----\n')).toBe(true);
    expect(pemDecode(pem, 'X509 CRL').equals(der)).toBe(true);
    const base = { issuerCert: h.intermediate.der, issuerKey: h.intermediate.key, crlNumber: 1, entries: [] };
    expect(() => buildCrl({ ...base, thisUpdate: days(1), nextUpdate: days(0) })).toThrow(/nextUpdate/);
    expect(() =>
      buildCrl({
        ...base,
        thisUpdate: days(0),
        nextUpdate: days(1),
        entries: [{ serial: 'xyz', revokedAt: days(0) }],
      }),
    ).toThrow(/not hex/);
    // The CRL must be signed by the key of the named issuer.
    expect(() =>
      buildCrl({ ...base, issuerKey: h.root.key, thisUpdate: days(0), nextUpdate: days(1) }),
    ).toThrow(/does not match/);
  }, 30_000);
});
