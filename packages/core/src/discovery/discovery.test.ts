import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCertwrightError } from '../errors.js';
import { createSelfSignedCertificate } from '../pki/certificate.js';
import { generateKeyPair } from '../pki/keys.js';
import { mutated, typedOnly } from '../testing/fuzz.js';
import { nextHealth } from './health.js';
import { describeChain } from './observe.js';
import { addressesOf, parseRange, refusedCategory } from './ranges.js';

const reasonOf = (fn: () => unknown): string => {
  try {
    fn();
    return 'ok';
  } catch (e) {
    return isCertwrightError(e) ? e.reason : 'untyped';
  }
};

describe('scan ranges', () => {
  it('canonicalises ranges and single addresses and clears host bits', () => {
    expect(parseRange('10.1.2.3/24', 'cidrs.0')).toMatchObject({ text: '10.1.2.0/24', size: 256 });
    expect(parseRange(' 192.168.7.9 ', 'cidrs.0')).toMatchObject({ text: '192.168.7.9', size: 1 });
    expect(parseRange('fd00::1/120', 'cidrs.0')).toMatchObject({ text: 'fd00::/120', size: 256 });
    expect([...addressesOf(parseRange('10.0.0.254/31', 'x'))]).toEqual(['10.0.0.254', '10.0.0.255']);
    expect([...addressesOf(parseRange('10.0.0.255/30', 'x'))]).toEqual([
      '10.0.0.252',
      '10.0.0.253',
      '10.0.0.254',
      '10.0.0.255',
    ]);
    const big = [...addressesOf(parseRange('10.0.0.0/20', 'x'))];
    expect(big).toHaveLength(4096);
    expect(big.at(-1)).toBe('10.0.15.255');
  });

  it('refuses oversized, malformed and never-scanned ranges with the field named', () => {
    for (const text of [
      '10.0.0.0/8',
      '10.0.0.0/19',
      '::/0',
      '1.2.3',
      '1.2.3.4/33',
      '01.2.3.4',
      '1.2.3.4/',
      'a/b/c',
      '',
    ]) {
      expect(
        reasonOf(() => parseRange(text, 'cidrs.3')),
        text,
      ).toBe('invalid_input');
    }
    for (const text of [
      '169.254.169.254',
      '169.254.10.0/24',
      '127.0.0.1',
      '::1',
      'fe80::/120',
      '0.0.0.0/24',
      '224.0.0.0/24',
    ]) {
      expect(
        reasonOf(() => parseRange(text, 'cidrs.0')),
        text,
      ).toBe('invalid_input');
    }
    try {
      parseRange('10.0.0.0/8', 'cidrs.3');
    } catch (e) {
      expect(isCertwrightError(e) && e.fields?.[0]?.field).toBe('cidrs.3');
    }
  });

  it('admits loopback only with the test opt-in, never metadata', () => {
    expect(parseRange('127.0.0.1/32', 'x', { allowLoopback: true }).text).toBe('127.0.0.1');
    expect(refusedCategory('127.0.0.1')).toBe('loopback');
    expect(refusedCategory('127.0.0.1', { allowLoopback: true })).toBeNull();
    expect(refusedCategory('169.254.169.254', { allowLoopback: true })).toBe('metadata');
    expect(refusedCategory('100.100.100.200')).toBe('metadata');
    expect(refusedCategory('::ffff:169.254.169.254')).toBe('metadata');
    expect(refusedCategory('10.0.0.1')).toBeNull();
    expect(refusedCategory('8.8.8.8')).toBeNull();
  });

  it('throws nothing but typed errors on arbitrary range text (seeded fuzz)', () => {
    const text = fc.oneof(
      fc.string({ maxLength: 80 }),
      fc.stringMatching(/^[0-9a-f:./ ]{0,60}$/),
      fc.tuple(fc.ipV4(), fc.integer({ min: -5, max: 140 })).map(([a, p]) => `${a}/${p}`),
      fc.tuple(fc.ipV6(), fc.integer({ min: 100, max: 140 })).map(([a, p]) => `${a}/${p}`),
    );
    fc.assert(
      fc.property(text, (t) => {
        expect(reasonOf(() => [...addressesOf(parseRange(t, 'cidrs.0'))].length)).not.toBe('untyped');
      }),
      { seed: 0x5ca11ed, numRuns: 3000 },
    );
  });
});

describe('the health state machine', () => {
  it('degrades at 2 failures, goes down at 5, mismatches at once and recovers on a match', () => {
    let s = { status: 'healthy' as const, consecutive_failures: 0 } as ReturnType<typeof nextHealth>;
    const walk: string[] = [];
    for (let i = 0; i < 6; i++) {
      s = nextHealth(s, 'failure');
      walk.push(s.status);
    }
    expect(walk).toEqual(['healthy', 'degraded', 'degraded', 'degraded', 'down', 'down']);
    expect(nextHealth(s, 'match')).toEqual({ status: 'healthy', consecutive_failures: 0 });
    expect(nextHealth(s, 'mismatch')).toEqual({ status: 'cert_mismatch', consecutive_failures: 0 });
    const mism = { status: 'cert_mismatch' as const, consecutive_failures: 0 };
    expect(nextHealth(mism, 'failure')).toEqual({ status: 'cert_mismatch', consecutive_failures: 1 });
    expect(nextHealth({ status: 'cert_mismatch', consecutive_failures: 1 }, 'failure').status).toBe(
      'degraded',
    );
  });
});

describe('served chains', () => {
  it('describes a chain and refuses garbage with typed errors only (seeded fuzz)', async () => {
    const keys = await generateKeyPair('RSA-2048');
    const cert = createSelfSignedCertificate(
      {
        subject: 'CN=fuzz.discovery.test,O=certwright',
        notBefore: new Date('2026-01-01T00:00:00Z'),
        notAfter: new Date('2027-01-01T00:00:00Z'),
        subjectAltNames: [
          { type: 'dns', value: 'fuzz.discovery.test' },
          { type: 'ip', value: '10.0.0.1' },
        ],
      },
      keys.privateKey,
    );
    const d = describeChain([cert.der]);
    expect(d).toMatchObject({
      subject: 'CN=fuzz.discovery.test,O=certwright',
      sans: ['fuzz.discovery.test', 'ip:10.0.0.1'],
      key_algorithm: 'RSA',
      key_size: 2048,
      signature_algorithm: 'sha256WithRSAEncryption',
      self_signed: true,
      chain_pem: '',
    });
    fc.assert(
      typedOnly({
        name: 'describeChain',
        covers: 'served leaf parsing',
        inputs: mutated([cert.der]),
        run: (der: Uint8Array) => describeChain([der]),
        size: (der: Uint8Array) => der.length,
        show: (der: Uint8Array) => Buffer.from(der).toString('hex'),
      }),
      { seed: 0xd15c0, numRuns: 1500 },
    );
  });
});
