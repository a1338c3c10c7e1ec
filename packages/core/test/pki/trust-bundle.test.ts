import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCertwrightError } from '../../src/errors.js';
import {
  certificateToPem,
  createSelfSignedCertificate,
  exportPkcs8Pem,
  generateKeyPair,
  issueCertificate,
  parseTrustBundle,
  prepareIssuer,
  readCertificate,
  signatureAlgorithmFor,
  TrustBundle,
  verifyClientChain,
} from '../../src/pki/index.js';
import { type Ca, DAY, days, type Hierarchy, issueLeaf, makeHierarchy, NOW } from './fixtures.js';
import { openssl, workdir } from './openssl.js';

/**
 * Client-certificate trust for the mutual-TLS enrollment routes: bundles are read strictly, and
 * chain validation agrees with `openssl verify -purpose sslclient` on every case below.
 */

let good: Hierarchy;
let foreign: Hierarchy;
let dir: Awaited<ReturnType<typeof workdir>>;

beforeAll(async () => {
  good = await makeHierarchy('ECDSA-P256', 'trust');
  foreign = await makeHierarchy('ECDSA-P256', 'foreign');
  dir = await workdir();
});
afterAll(() => dir.cleanup());

const pem = (...ders: Uint8Array[]) => ders.map(certificateToPem).join('');

async function caUnder(parent: Ca, name: string, lifetimeDays: number, pathLength?: number): Promise<Ca> {
  const keys = await generateKeyPair('ECDSA-P256');
  const cert = issueCertificate(
    {
      subject: `CN=${name}`,
      publicKey: keys.publicKey,
      notBefore: days(-1),
      notAfter: days(lifetimeDays),
      basicConstraints: pathLength === undefined ? { ca: true } : { ca: true, pathLength },
    },
    parent.authority,
  );
  return { key: keys.privateKey, der: cert.der, authority: prepareIssuer(cert.der, keys.privateKey) };
}

/** Our verdict and openssl's for the same chain and bundle. */
async function verdicts(chain: Uint8Array[], bundle: Uint8Array[], at: Date = NOW) {
  let ours: string;
  try {
    verifyClientChain(chain, parseTrustBundle(pem(...bundle)), { now: at });
    ours = 'ok';
  } catch (error) {
    if (!isCertwrightError(error)) throw error;
    expect(error.reason).toBe('unauthenticated');
    ours = 'refused';
  }
  const name = Math.random().toString(36).slice(2);
  const leaf = await dir.file(`${name}-leaf.pem`, pem(chain[0]!));
  const ca = await dir.file(`${name}-ca.pem`, pem(...bundle));
  // Any CA of the bundle is an anchor, root or not: OpenSSL's -partial_chain.
  const args = [
    'verify',
    '-partial_chain',
    '-purpose',
    'sslclient',
    '-CAfile',
    ca,
    '-attime',
    String(Math.floor(at.getTime() / 1000)),
  ];
  if (chain.length > 1)
    args.push('-untrusted', await dir.file(`${name}-untrusted.pem`, pem(...chain.slice(1))));
  const result = await openssl([...args, leaf]);
  return { ours, openssl: result.code === 0 ? 'ok' : 'refused' };
}

describe('verifyClientChain, checked against openssl verify', () => {
  it('accepts a leaf with its intermediate when the bundle holds the root', async () => {
    const leaf = await issueLeaf(good.intermediate, 'ECDSA-P256');
    expect(await verdicts([leaf.der, good.intermediate.der], [good.root.der])).toEqual({
      ours: 'ok',
      openssl: 'ok',
    });
    const verified = verifyClientChain(
      [leaf.der, good.intermediate.der],
      parseTrustBundle(pem(good.root.der)),
      {
        now: NOW,
      },
    );
    expect(verified.anchor.subject.text).toContain('test root trust');
    expect(verified.intermediates).toHaveLength(1);
  });

  it('accepts a leaf alone when the bundle holds its issuer', async () => {
    const leaf = await issueLeaf(good.intermediate, 'ECDSA-P256');
    expect(await verdicts([leaf.der], [good.intermediate.der])).toEqual({ ours: 'ok', openssl: 'ok' });
  });

  it('refuses a leaf of another CA, even when it sends the other CA along', async () => {
    const stranger = await issueLeaf(foreign.intermediate, 'ECDSA-P256');
    expect(
      await verdicts([stranger.der, foreign.intermediate.der, foreign.root.der], [good.root.der]),
    ).toEqual({
      ours: 'refused',
      openssl: 'refused',
    });
  });

  it('refuses a forged leaf: right issuer name, wrong signing key', async () => {
    const impostorKeys = await generateKeyPair('ECDSA-P256');
    const impostor = createSelfSignedCertificate(
      {
        subject: `CN=certwright test intermediate trust,O=certwright tests,C=DE`,
        notBefore: days(-1),
        notAfter: days(365),
        basicConstraints: { ca: true },
      },
      impostorKeys.privateKey,
    );
    const forged = await issueLeaf(
      {
        key: impostorKeys.privateKey,
        der: impostor.der,
        authority: prepareIssuer(impostor.der, impostorKeys.privateKey),
      },
      'ECDSA-P256',
    );
    expect(await verdicts([forged.der, good.intermediate.der], [good.root.der])).toEqual({
      ours: 'refused',
      openssl: 'refused',
    });
  });

  it('refuses expired and not-yet-valid leaves', async () => {
    const expired = await issueLeaf(good.intermediate, 'ECDSA-P256', {
      notBefore: days(-30),
      notAfter: days(-1),
    });
    expect(await verdicts([expired.der, good.intermediate.der], [good.root.der])).toEqual({
      ours: 'refused',
      openssl: 'refused',
    });
    const future = await issueLeaf(good.intermediate, 'ECDSA-P256', {
      notBefore: days(2),
      notAfter: days(30),
    });
    expect(await verdicts([future.der, good.intermediate.der], [good.root.der])).toEqual({
      ours: 'refused',
      openssl: 'refused',
    });
  });

  it('refuses a leaf that is only for servers, accepts one without any EKU', async () => {
    const server = await issueLeaf(good.intermediate, 'ECDSA-P256', { extendedKeyUsage: ['serverAuth'] });
    expect(await verdicts([server.der, good.intermediate.der], [good.root.der])).toEqual({
      ours: 'refused',
      openssl: 'refused',
    });
    const any = await issueLeaf(good.intermediate, 'ECDSA-P256', { extendedKeyUsage: [] });
    expect(await verdicts([any.der, good.intermediate.der], [good.root.der])).toEqual({
      ours: 'ok',
      openssl: 'ok',
    });
  });

  it('refuses a chain through a certificate that is not a CA', async () => {
    const middle = await issueLeaf(good.intermediate, 'ECDSA-P256');
    // prepareIssuer refuses a non-CA issuer, so this authority is put together by hand.
    const notACa = {
      certificate: readCertificate(middle.der),
      privateKey: middle.key,
      signatureAlgorithm: signatureAlgorithmFor(middle.key),
    };
    const keys = await generateKeyPair('ECDSA-P256');
    const leaf = issueCertificate(
      { subject: 'CN=below.a.leaf', publicKey: keys.publicKey, notBefore: days(-1), notAfter: days(10) },
      notACa,
    );
    expect(await verdicts([leaf.der, middle.der, good.intermediate.der], [good.root.der])).toEqual({
      ours: 'refused',
      openssl: 'refused',
    });
  });

  it('honours path length constraints', async () => {
    const constrained = await caUnder(good.root, 'constrained', 365, 0);
    const sub = await caUnder(constrained, 'sub of constrained', 300);
    const leaf = await issueLeaf(sub, 'ECDSA-P256');
    expect(await verdicts([leaf.der, sub.der, constrained.der], [good.root.der])).toEqual({
      ours: 'refused',
      openssl: 'refused',
    });
    const direct = await issueLeaf(constrained, 'ECDSA-P256');
    expect(await verdicts([direct.der, constrained.der], [good.root.der])).toEqual({
      ours: 'ok',
      openssl: 'ok',
    });
  });

  it('names the reason in the error', () => {
    expect(() => verifyClientChain([], parseTrustBundle(pem(good.root.der)), { now: NOW })).toThrow(
      /no client certificate/,
    );
    expect(() => verifyClientChain([good.intermediate.der], [], { now: NOW })).toThrow(/no trust anchors/);
    expect(() =>
      verifyClientChain(new Array(9).fill(good.intermediate.der), parseTrustBundle(pem(good.root.der)), {
        now: NOW,
      }),
    ).toThrow(/at most 8/);
  });

  it('answers only with typed errors for mutated chains (seeded)', async () => {
    const leaf = await issueLeaf(good.intermediate, 'ECDSA-P256');
    const anchors = parseTrustBundle(pem(good.root.der));
    const seeds = [leaf.der, good.intermediate.der];
    fc.assert(
      fc.property(
        fc.nat({ max: 1 }),
        fc.array(fc.record({ at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.boolean(),
        (which, edits, truncate) => {
          const bytes = Buffer.from(seeds[which]!);
          for (const e of edits) bytes[e.at % bytes.length] = e.value;
          const mutated = truncate ? bytes.subarray(0, bytes.length - 7) : bytes;
          const chain = which === 0 ? [mutated, good.intermediate.der] : [leaf.der, mutated];
          try {
            verifyClientChain(chain, anchors, { now: NOW });
          } catch (error) {
            if (!isCertwrightError(error)) throw error;
            expect(error.reason).toBe('unauthenticated');
          }
        },
      ),
      { seed: 7030, numRuns: 300 },
    );
  });
});

describe('parseTrustBundle', () => {
  it('reads every CA certificate of a bundle, comments between blocks included', () => {
    const text = `# corporate roots\n${pem(good.root.der)}\nsome note\n${pem(good.intermediate.der)}`;
    expect(parseTrustBundle(text).map((a) => a.info.subject.text)).toEqual([
      expect.stringContaining('root trust'),
      expect.stringContaining('intermediate trust'),
    ]);
  });

  it('refuses empty files, other PEM blocks and non-CA certificates, naming the position', async () => {
    const leaf = await issueLeaf(good.intermediate, 'ECDSA-P256');
    const keyPem = exportPkcs8Pem((await generateKeyPair('ECDSA-P256')).privateKey);
    expect(() => parseTrustBundle('')).toThrow(/holds no PEM certificate/);
    expect(() => parseTrustBundle(pem(good.root.der) + keyPem)).toThrow(/certificate 2 .* PRIVATE KEY/);
    expect(() => parseTrustBundle(pem(good.root.der, leaf.der))).toThrow(
      /certificate 2 of the trust bundle \(CN=leaf.example.test\) is not a CA/,
    );
    expect(() => parseTrustBundle('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n')).toThrow(
      /certificate 1 of the trust bundle/,
    );
  });
});

describe('TrustBundle', () => {
  it('keeps the anchors in force when a reload fails', async () => {
    let text = pem(good.root.der);
    const bundle = new TrustBundle(async () => text);
    expect(bundle.loadedAt).toBeNull();
    await bundle.reload(NOW);
    expect(bundle.anchors).toHaveLength(1);
    text = 'garbage';
    await expect(bundle.reload(new Date(NOW.getTime() + DAY))).rejects.toMatchObject({
      reason: 'invalid_input',
    });
    expect(bundle.anchors).toHaveLength(1);
    expect(bundle.loadedAt).toEqual(NOW);
    const leaf = await issueLeaf(good.intermediate, 'ECDSA-P256');
    expect(bundle.verify([leaf.der, good.intermediate.der], { now: NOW }).leaf.subject.text).toBe(
      'CN=leaf.example.test',
    );
  });

  it('reports an unreadable source as unavailable, with the error code and no path', async () => {
    const bundle = new TrustBundle(async () => {
      throw Object.assign(new Error("ENOENT: no such file or directory, open '/etc/secret/place.pem'"), {
        code: 'ENOENT',
      });
    });
    const error = await bundle.reload(NOW).catch((e: unknown) => e);
    expect(error).toMatchObject({
      reason: 'unavailable',
      message: 'the trust bundle cannot be read (ENOENT)',
    });
  });
});
