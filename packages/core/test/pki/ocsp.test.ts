import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCertwrightError } from '../../src/errors.js';
import * as der from '../../src/pki/der.js';
import { tlv } from '../../src/pki/der.js';
import {
  buildCertId,
  buildOcspErrorResponse,
  buildOcspResponse,
  certIdMatcher,
  certificateToPem,
  type OcspCertStatus,
  OcspRequestError,
  type OcspResponder,
  OID,
  parseOcspRequest,
  prepareOcspResponder,
} from '../../src/pki/index.js';
import { days, type Hierarchy, issueLeaf, makeHierarchy } from './fixtures.js';
import { openssl, workdir } from './openssl.js';

let w: Awaited<ReturnType<typeof workdir>>;
let h: Hierarchy;
let responder: OcspResponder;
const files: Record<string, string> = {};
const serials: Record<string, string> = {};

beforeAll(async () => {
  w = await workdir();
  h = await makeHierarchy('ECDSA-P256', 'ocsp');
  const resp = await issueLeaf(h.intermediate, 'ECDSA-P256', {
    subject: 'CN=certwright OCSP responder',
    subjectAltNames: [],
    extendedKeyUsage: ['OCSPSigning'],
    ocspNoCheck: true,
  });
  responder = prepareOcspResponder(resp.der, resp.key);
  const good = await issueLeaf(h.intermediate, 'ECDSA-P256');
  const revoked = await issueLeaf(h.intermediate, 'RSA-2048');
  serials.good = good.serialNumber;
  serials.revoked = revoked.serialNumber;
  files.root = await w.file('root.pem', certificateToPem(h.root.der));
  files.inter = await w.file('int.pem', certificateToPem(h.intermediate.der));
  files.chain = await w.file(
    'chain.pem',
    certificateToPem(h.root.der) + certificateToPem(h.intermediate.der),
  );
  files.responder = await w.file('responder.pem', certificateToPem(resp.der));
  files.good = await w.file('good.pem', certificateToPem(good.der));
  files.revoked = await w.file('revoked.pem', certificateToPem(revoked.der));
}, 60_000);
afterAll(async () => {
  await w.cleanup();
});

/** What a responder does with a request: match the issuer, look up the serial, sign. */
function answer(reqDer: Uint8Array, nonceExpected: boolean): Buffer {
  const req = parseOcspRequest(reqDer);
  expect(req.nonce !== undefined).toBe(nonceExpected);
  const matches = certIdMatcher(readIssuer());
  return buildOcspResponse({
    responder,
    producedAt: new Date(),
    nonce: req.nonce,
    responses: req.certIds.map((certId) => {
      let certStatus: OcspCertStatus = { status: 'unknown' };
      if (matches(certId) && certId.serialNumber === serials.good) certStatus = { status: 'good' };
      if (matches(certId) && certId.serialNumber === serials.revoked) {
        certStatus = {
          status: 'revoked',
          revokedAt: new Date(Date.now() - 3_600_000),
          reason: 'keyCompromise',
        };
      }
      return { certId, certStatus, thisUpdate: new Date(Date.now() - 60_000), nextUpdate: days(1) };
    }),
  });
}
const readIssuer = () => h.intermediate.authority.certificate;

describe('OCSP with real openssl requests', () => {
  for (const hash of ['sha1', 'sha256'] as const) {
    for (const nonce of [true, false]) {
      it(`answers good, revoked and unknown for a ${hash} request ${nonce ? 'with' : 'without'} nonce`, async () => {
        const tag = `${hash}-${nonce}`;
        const reqPath = `${w.dir}/${tag}.req`;
        const args = [
          'ocsp',
          '-issuer',
          files.inter!,
          '-cert',
          files.good!,
          '-cert',
          files.revoked!,
          '-serial',
          '0x0badc0ffee',
          '-reqout',
          reqPath,
        ];
        if (hash === 'sha256') args.splice(3, 0, '-sha256'); // the digest must precede -cert
        if (!nonce) args.push('-no_nonce');
        expect((await openssl(args)).code).toBe(0);
        const reqDer = await readFile(reqPath);
        const req = parseOcspRequest(reqDer);
        expect(req.certIds.map((c) => c.hash)).toEqual([hash, hash, hash]);
        expect(req.certIds[2]!.serialNumber).toBe('badc0ffee');
        const respPath = await w.file(`${tag}.resp`, answer(reqDer, nonce));

        for (const trust of [
          ['-CAfile', files.chain!],
          ['-VAfile', files.responder!],
        ]) {
          const r = await openssl([
            'ocsp',
            // CertIDs for status lookup are computed with this digest, so it must match the request.
            ...(hash === 'sha256' ? ['-sha256'] : []),
            '-respin',
            respPath,
            '-reqin',
            reqPath,
            // Without -no_nonce, openssl adds a fresh nonce to the loaded request before comparing.
            '-no_nonce',
            ...trust,
            '-issuer',
            files.inter!,
            '-cert',
            files.good!,
            '-cert',
            files.revoked!,
            '-serial',
            '0x0badc0ffee',
            '-resp_text',
          ]);
          expect(r.stderr).toContain('Response verify OK');
          expect(r.stderr).not.toMatch(/nonce/i);
          expect(r.stdout).toContain(`${files.good}: good`);
          expect(r.stdout).toMatch(
            new RegExp(
              `${files.revoked}: revoked\\s+This Update: .*\\s+Next Update: .*\\s+Reason: keyCompromise\\s+Revocation Time:`,
            ),
          );
          expect(r.stdout).toContain('0x0badc0ffee: unknown');
          expect(r.stdout).toContain('Responder Id: ');
          expect(r.stdout).toContain(nonce ? 'OCSP Nonce' : 'Response Data');
          if (!nonce) expect(r.stdout).not.toContain('OCSP Nonce');
          expect(r.stdout).toContain(hash === 'sha1' ? 'Hash Algorithm: sha1' : 'Hash Algorithm: sha256');
        }
      }, 30_000);
    }
  }

  for (const alg of ['RSA-2048', 'Ed25519'] as const) {
    it(`signs with a ${alg} responder under a ${alg} CA`, async () => {
      const hh = await makeHierarchy(alg, `ocsp-${alg}`);
      const respLeaf = await issueLeaf(hh.intermediate, alg, {
        subject: `CN=OCSP responder ${alg}`,
        subjectAltNames: [],
        extendedKeyUsage: ['OCSPSigning'],
        ocspNoCheck: true,
      });
      const resp = prepareOcspResponder(respLeaf.der, respLeaf.key);
      const leaf = await issueLeaf(hh.intermediate, alg);
      const inter = await w.file(`${alg}-int.pem`, certificateToPem(hh.intermediate.der));
      const chain = await w.file(
        `${alg}-chain.pem`,
        certificateToPem(hh.root.der) + certificateToPem(hh.intermediate.der),
      );
      const leafPath = await w.file(`${alg}-leaf.pem`, certificateToPem(leaf.der));
      const reqPath = `${w.dir}/${alg}.req`;
      expect((await openssl(['ocsp', '-issuer', inter, '-cert', leafPath, '-reqout', reqPath])).code).toBe(0);
      const req = parseOcspRequest(await readFile(reqPath));
      expect(certIdMatcher(hh.intermediate.authority.certificate)(req.certIds[0]!)).toBe(true);
      const der = buildOcspResponse({
        responder: resp,
        producedAt: new Date(),
        nonce: req.nonce,
        responses: [
          {
            certId: req.certIds[0]!,
            certStatus: { status: 'revoked', revokedAt: new Date(Date.now() - 1000), reason: 'superseded' },
            thisUpdate: new Date(Date.now() - 1000),
            nextUpdate: days(1),
          },
        ],
      });
      const r = await openssl([
        'ocsp',
        '-respin',
        await w.file(`${alg}.resp`, der),
        '-reqin',
        reqPath,
        '-no_nonce',
        '-CAfile',
        chain,
        '-issuer',
        inter,
        '-cert',
        leafPath,
      ]);
      expect(r.stderr).toContain('Response verify OK');
      expect(r.stdout).toMatch(new RegExp(`${leafPath}: revoked[\\s\\S]*Reason: superseded`));
    }, 60_000);
  }

  it('fails openssl verification when the nonce is not echoed', async () => {
    const reqPath = `${w.dir}/nonce-mismatch.req`;
    await openssl(['ocsp', '-issuer', files.inter!, '-cert', files.good!, '-reqout', reqPath]);
    const req = parseOcspRequest(await readFile(reqPath));
    const resp = buildOcspResponse({
      responder,
      producedAt: new Date(),
      responses: [{ certId: req.certIds[0]!, certStatus: { status: 'good' }, thisUpdate: new Date() }],
    });
    const r = await openssl([
      'ocsp',
      '-respin',
      await w.file('nononce.resp', resp),
      '-reqin',
      reqPath,
      '-CAfile',
      files.chain!,
      '-issuer',
      files.inter!,
      '-cert',
      files.good!,
    ]);
    expect(r.stderr + r.stdout).toMatch(/no nonce in response/i);
  });

  it('matches CertIDs against the issuer and builds its own for serial lookups', () => {
    const matches = certIdMatcher(readIssuer());
    for (const hash of ['sha1', 'sha256', 'sha384'] as const) {
      const id = buildCertId(readIssuer(), serials.good!, hash);
      expect(matches(id)).toBe(true);
      expect(parseOcspRequestCertIdRoundTrip(id.der)).toBe(serials.good);
      expect(certIdMatcher(h.root.authority.certificate)(id)).toBe(false);
    }
  });

  it('builds error responses openssl reads', async () => {
    for (const status of ['malformedRequest', 'internalError', 'unauthorized', 'tryLater'] as const) {
      const r = await openssl([
        'ocsp',
        '-respin',
        await w.file(`${status}.resp`, buildOcspErrorResponse(status)),
        '-resp_text',
        '-noverify',
      ]);
      expect(r.stdout + r.stderr).toContain(`Responder Error: ${status.toLowerCase()} (`);
    }
  });

  it('refuses a responder certificate without id-kp-OCSPSigning', async () => {
    const leaf = await issueLeaf(h.intermediate, 'ECDSA-P256');
    expect(() => prepareOcspResponder(leaf.der, leaf.key)).toThrow(/OCSPSigning/);
  });
});

/** Wraps a CertID in a minimal OCSPRequest and parses it back, returning the serial. */
function parseOcspRequestCertIdRoundTrip(certId: Uint8Array): string {
  const der = tlv(0x30, tlv(0x30, tlv(0x30, tlv(0x30, certId))));
  return parseOcspRequest(der).certIds[0]!.serialNumber;
}

function nested(depth: number): Buffer {
  let inner: Buffer = Buffer.alloc(0);
  for (let i = 0; i < depth; i++) inner = tlv(0x30, inner);
  return inner;
}

describe('malformed OCSP requests', () => {
  const cases: [string, Uint8Array][] = [
    ['empty body', new Uint8Array()],
    ['garbage', Buffer.from('hello, this is not DER')],
    ['truncated', Buffer.from('3082010a3081', 'hex')],
    ['an empty requestList', Buffer.from('300430023000', 'hex')],
    ['indefinite length (BER)', Buffer.from('308030800000', 'hex')],
    ['trailing bytes', Buffer.from('30023000ff', 'hex')],
    ['deep nesting', nested(500)],
    ['a 1 MiB body', Buffer.alloc(1024 * 1024, 0x30)],
  ];
  for (const [name, der] of cases) {
    it(`answers ${name} with malformedRequest`, () => {
      let err: unknown;
      try {
        parseOcspRequest(der);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(OcspRequestError);
      expect(isCertwrightError(err)).toBe(true);
      expect((err as OcspRequestError).responseStatus).toBe('malformedRequest');
      expect((err as OcspRequestError).code).toBe('bad_request');
    });
  }
});

describe('OCSP request limits', () => {
  /** An OCSPRequest for the good leaf with `nonce` as its nonce extension value (RFC 8954). */
  const withNonce = (nonceValue: Uint8Array): Buffer =>
    der.sequence(
      der.sequence(
        der.sequence(der.sequence(buildCertId(readIssuer(), serials.good!, 'sha256').der)),
        der.explicit(2, der.sequence(der.extension(OID.idPkixOcspNonce, false, nonceValue))),
      ),
    );
  const refusal = (fn: () => unknown): string => {
    try {
      fn();
    } catch (e) {
      expect(e).toBeInstanceOf(OcspRequestError);
      return (e as Error).message;
    }
    throw new Error('expected a malformedRequest');
  };

  it('accepts eight CertIDs from openssl ocsp and refuses nine with malformedRequest', async () => {
    for (const count of [8, 9]) {
      const reqPath = `${w.dir}/certids-${count}.req`;
      const serialArgs = Array.from({ length: count }, (_, i) => [
        '-serial',
        `0x${(i + 1).toString(16)}`,
      ]).flat();
      const made = await openssl([
        'ocsp',
        '-issuer',
        files.inter!,
        ...serialArgs,
        '-no_nonce',
        '-reqout',
        reqPath,
      ]);
      expect(made.code).toBe(0);
      const reqDer = await readFile(reqPath);
      if (count === 8) expect(parseOcspRequest(reqDer).certIds).toHaveLength(8);
      else expect(refusal(() => parseOcspRequest(reqDer))).toMatch(/more than 8 CertIDs/);
    }
  });

  it('echoes a 32-octet nonce that openssl verifies, and refuses 33 octets, an empty nonce and a bare one', async () => {
    const nonce32 = der.octetString(Buffer.alloc(32, 0xa5));
    const reqDer = withNonce(nonce32);
    expect(Buffer.from(parseOcspRequest(reqDer).nonce!)).toEqual(nonce32);
    const reqPath = await w.file('nonce32.req', reqDer);
    const respPath = await w.file('nonce32.resp', answer(reqDer, true));
    const verify = (resp: string) =>
      openssl([
        'ocsp',
        '-respin',
        resp,
        '-reqin',
        reqPath,
        '-no_nonce',
        '-CAfile',
        files.chain!,
        '-resp_text',
      ]);
    const ok = await verify(respPath);
    expect(ok.stderr).toContain('Response verify OK');
    expect(ok.stderr).not.toMatch(/nonce/i);
    // openssl does compare the nonce: an answer echoing another one fails.
    const other = buildOcspResponse({
      responder,
      producedAt: new Date(),
      nonce: der.octetString(Buffer.alloc(32, 0x5a)),
      responses: [
        {
          certId: parseOcspRequest(reqDer).certIds[0]!,
          certStatus: { status: 'good' },
          thisUpdate: new Date(),
        },
      ],
    });
    expect((await verify(await w.file('nonce-other.resp', other))).stderr).toMatch(/nonce verify error/i);

    expect(refusal(() => parseOcspRequest(withNonce(der.octetString(Buffer.alloc(33)))))).toMatch(
      /33 octets is outside 1–32/,
    );
    expect(refusal(() => parseOcspRequest(withNonce(der.octetString(Buffer.alloc(0)))))).toMatch(/0 octets/);
    expect(refusal(() => parseOcspRequest(withNonce(der.integer(5))))).toMatch(/OCTET STRING/);
    // The limit is the responder's to raise (RFC 9654 lets some environments use longer nonces).
    expect(
      parseOcspRequest(withNonce(der.octetString(Buffer.alloc(64))), { maxNonceBytes: 64 }).nonce,
    ).toBeDefined();
  });
});
