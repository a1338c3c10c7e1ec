import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { isCertwrightError } from '../../../src/errors.js';
import {
  buildCertsOnly,
  buildEnvelopedData,
  buildSignedData,
  der,
  describeEnvelopedData,
  openEnvelopedData,
  parseCertsOnly,
  parseSignedData,
  verifySignerInfo,
} from '../../../src/pki/index.js';
import { cmsFixture, type Party, reasonOf } from './support.js';

/**
 * Mutations of real messages and random bytes never make the CMS parsers throw anything but a
 * CertwrightError. Seeded, so a failure replays. The seeds are messages certwright writes and a
 * PKCSReq captured from micromdm scepclient 2.1 (Debian package `scep`).
 */
const SCEPCLIENT_PKCSREQ = readFileSync(new URL('./fixtures/scepclient-2.1-pkcsreq.der', import.meta.url));

let seeds: Uint8Array[] = [];
let ra: Party;

beforeAll(async () => {
  const fx = await cmsFixture('cms-fuzz');
  ra = await fx.party('RSA-2048', 'ra.fuzz.test');
  const ec = await fx.party('ECDSA-P256', 'ec.fuzz.test');
  const envelope = buildEnvelopedData({
    content: Buffer.alloc(300, 1),
    recipient: { certificate: ra.der },
    contentEncryption: 'aes-128-cbc',
  });
  seeds = [
    SCEPCLIENT_PKCSREQ,
    envelope,
    buildSignedData({
      content: envelope,
      signer: { certificate: ec.der, privateKey: ec.key },
      digest: 'sha256',
      signedAttributes: [{ type: '2.16.840.1.113733.1.9.2', values: [der.printableString('19')] }],
    }),
    buildSignedData({ signer: { certificate: ra.der, privateKey: ra.key }, digest: 'sha1' }),
    buildCertsOnly([fx.root.der, ra.der]),
  ];
});

const LIMITS = { maxBytes: 64 * 1024 };

function exercise(input: Uint8Array): void {
  const attempts: (() => unknown)[] = [
    () => {
      const sd = parseSignedData(input, LIMITS);
      for (const signer of sd.signers) for (const c of sd.certificates) verifySignerInfo(sd, signer, c);
      if (sd.content)
        openEnvelopedData(sd.content, { privateKey: ra.key, certificate: ra.der, allowSingleDes: true });
    },
    () => parseCertsOnly(input, LIMITS),
    () => describeEnvelopedData(input, LIMITS),
    () => openEnvelopedData(input, { privateKey: ra.key, certificate: ra.der, limits: LIMITS }),
  ];
  for (const attempt of attempts) {
    try {
      attempt();
    } catch (error) {
      if (!isCertwrightError(error)) throw error;
    }
  }
}

const mutation = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({
    kind: fc.constant('set' as const),
    at: fc.nat(),
    value: fc.constantFrom(0x00, 0x80, 0x81, 0x84, 0xff, 0x30, 0xa0, 0x24),
  }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }),
  }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), count: fc.integer({ min: 1, max: 16 }) }),
);

type Mutation = typeof mutation extends fc.Arbitrary<infer T> ? T : never;

function mutate(seed: Uint8Array, ops: Mutation[]): Uint8Array {
  let b = Buffer.from(seed);
  for (const op of ops) {
    if (b.length === 0) break;
    const at = op.at % b.length;
    switch (op.kind) {
      case 'flip':
        b[at]! ^= 1 << op.bit;
        break;
      case 'set':
        b[at] = op.value;
        break;
      case 'truncate':
        b = b.subarray(0, at);
        break;
      case 'insert':
        b = Buffer.concat([b.subarray(0, at), op.bytes, b.subarray(at)]);
        break;
      case 'delete':
        b = Buffer.concat([b.subarray(0, at), b.subarray(at + op.count)]);
        break;
    }
  }
  return b;
}

describe('CMS parser fuzz', () => {
  it('mutated real messages fail only with typed errors', () => {
    fc.assert(
      fc.property(fc.nat(), fc.array(mutation, { minLength: 1, maxLength: 4 }), (pick, ops) => {
        exercise(mutate(seeds[pick % seeds.length]!, ops));
      }),
      { seed: 0xc3501, numRuns: 1500 },
    );
  });

  it('random bytes fail only with typed errors', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => exercise(bytes)),
      { seed: 0xc3502, numRuns: 1000 },
    );
  });
});

describe('hostile CMS', () => {
  const nested = (levels: number, indefinite: boolean): Buffer => {
    if (indefinite) {
      return Buffer.concat([
        Buffer.alloc(levels * 2).map((_, i) => (i % 2 === 0 ? 0x30 : 0x80)),
        Buffer.alloc(levels * 2),
      ]);
    }
    let b: Buffer = Buffer.from([0x05, 0x00]);
    for (let i = 0; i < levels; i++) b = der.sequence(b);
    return b;
  };

  it('refuses deep nesting (DER and BER) without exhausting the stack', () => {
    for (const levels of [100, 100_000]) {
      expect(reasonOf(() => parseSignedData(nested(levels, true)))).toBe('malformed');
      expect(reasonOf(() => openEnvelopedData(nested(levels, true), { privateKey: ra.key }))).toBe(
        'malformed',
      );
    }
    expect(reasonOf(() => parseSignedData(nested(1000, false)))).toBe('malformed');
  });

  it('refuses too many values and input over the size cap', () => {
    const many = der.sequence(...Array.from({ length: 60_000 }, () => Buffer.from([0x05, 0x00])));
    expect(reasonOf(() => parseSignedData(many))).toBe('malformed');
    expect(reasonOf(() => parseCertsOnly(Buffer.alloc(2 * 1024 * 1024, 0x30)))).toBe('too_large');
    expect(reasonOf(() => parseSignedData(Buffer.from([0x30, 0x84, 0x7f, 0xff, 0xff, 0xff, 0x00])))).toBe(
      'malformed',
    );
  });

  it('refuses BER that hides other values in a chunked OCTET STRING', () => {
    // 0x24 (constructed OCTET STRING) holding a SEQUENCE instead of OCTET STRING chunks.
    const bad = Buffer.from([0x30, 0x80, 0x24, 0x80, 0x30, 0x00, 0x00, 0x00, 0x00, 0x00]);
    expect(reasonOf(() => parseSignedData(bad))).toBe('malformed');
  });
});
