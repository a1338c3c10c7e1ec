import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildCertId,
  buildOcspResponse,
  certIdMatcher,
  createSelfSignedCertificate,
  der,
  generateKeyPair,
  issueCertificate,
  prepareIssuer,
  prepareOcspResponder,
  type readCertificate,
} from '@certwright/core/pki';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createOcspHandler,
  decodeGetRequest,
  maxGetPathLength,
  OCSP_GET_MAX_REQUEST_BYTES,
  type OcspSource,
} from './index.js';

const transport = { remoteAddress: '127.0.0.1' };
const ISSUER = 'iss-test';
let handler: ReturnType<typeof createOcspHandler>;
let caInfo: ReturnType<typeof readCertificate>;
const REVOKED = 'a0b';
const norm = (serial: string) => serial.toLowerCase().replace(/^0+(?=.)/, '');

/** openssl's reading of a DER OCSPResponse (status line and cert status). */
function describeResponse(body: ArrayBuffer): string {
  const dir = mkdtempSync(join(tmpdir(), 'cw-ocsp-'));
  try {
    writeFileSync(join(dir, 'r.der'), Buffer.from(body));
    return execFileSync('openssl', ['ocsp', '-respin', join(dir, 'r.der'), '-resp_text', '-noverify'], {
      encoding: 'utf8',
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  const caKey = await generateKeyPair('ECDSA-P256');
  const now = new Date();
  const ca = createSelfSignedCertificate(
    {
      subject: 'CN=OCSP unit CA',
      notBefore: now,
      notAfter: new Date(now.getTime() + 86_400_000),
      basicConstraints: { ca: true },
    },
    caKey.privateKey,
  );
  const authority = prepareIssuer(ca.der, caKey.privateKey);
  caInfo = authority.certificate;
  const rKey = await generateKeyPair('ECDSA-P256');
  const rCert = issueCertificate(
    {
      subject: 'CN=responder',
      publicKey: rKey.publicKey,
      notBefore: now,
      notAfter: new Date(now.getTime() + 3_600_000),
      extendedKeyUsage: ['OCSPSigning'],
      ocspNoCheck: true,
    },
    authority,
  );
  const responder = prepareOcspResponder(rCert.der, rKey.privateKey);
  const matches = certIdMatcher(caInfo);
  // A small real source: statuses from a map, signed by a real delegated responder.
  const source: OcspSource = {
    async respond(issuerId, request) {
      if (issuerId !== ISSUER) return null;
      const producedAt = new Date();
      return {
        producedAt,
        nextUpdate: new Date(producedAt.getTime() + 600_000),
        der: buildOcspResponse({
          responder,
          producedAt,
          ...(request.nonce ? { nonce: request.nonce } : {}),
          responses: request.certIds.map((certId) => ({
            certId,
            thisUpdate: producedAt,
            certStatus: !matches(certId)
              ? { status: 'unknown' as const }
              : norm(certId.serialNumber) === REVOKED
                ? { status: 'revoked' as const, revokedAt: producedAt, reason: 'keyCompromise' as const }
                : { status: 'good' as const },
          })),
        }),
      };
    },
    async respondToSerial(issuerId, serial) {
      return this.respond(issuerId, {
        certIds: [buildCertId(caInfo, serial)],
        nonce: undefined,
        signed: false,
        extensions: [],
      });
    },
    async serialStatus(issuerId, serial) {
      if (issuerId !== ISSUER) return null;
      const now = new Date();
      return {
        serial,
        status: norm(serial) === REVOKED ? 'revoked' : 'good',
        thisUpdate: now,
        nextUpdate: now,
      };
    },
  };
  handler = createOcspHandler({ source });
});

const request = (serial: string) =>
  der.sequence(der.sequence(der.sequence(der.sequence(buildCertId(caInfo, serial, 'sha1').der))));
const post = (body: Uint8Array | string | null, headers: Record<string, string> = {}, issuer = ISSUER) =>
  handler(
    new Request(`https://h/.well-known/pki/ocsp/${issuer}`, {
      method: 'POST',
      headers,
      body: body === null ? null : typeof body === 'string' ? body : new Uint8Array(body),
    }),
    transport,
  );

describe('OCSP handler', () => {
  it('answers POST with or without Content-Type; another explicit type is 415', async () => {
    for (const headers of [{}, { 'content-type': 'application/ocsp-request' }] as Record<string, string>[]) {
      const res = await post(request(REVOKED), headers);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/ocsp-response');
      const text = describeResponse(await res.arrayBuffer());
      expect(text).toContain('Cert Status: revoked');
      expect(text).toContain('keyCompromise');
    }
    const wrong = await post(request('01'), { 'content-type': 'application/json' });
    expect(wrong.status).toBe(415);
  });

  it.each([
    ['garbage', () => Buffer.from('not der at all')],
    ['an empty body', () => Buffer.alloc(0)],
    [
      'deep nesting',
      () => {
        let b: Buffer = Buffer.from([5, 0]);
        for (let i = 0; i < 100; i++) b = der.sequence(b);
        return b;
      },
    ],
    ['a truncated request', () => request('01').subarray(0, 20)],
  ])('answers %s with 400 and a malformedRequest OCSP response', async (_name, body) => {
    const res = await post(body());
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/ocsp-response');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(Buffer.from([0x30, 0x03, 0x0a, 0x01, 0x01]));
  });

  it('refuses oversized bodies without reading them (413, malformedRequest)', async () => {
    const res = await post(Buffer.alloc(64 * 1024, 0x30));
    expect(res.status).toBe(413);
  });

  it('answers GET with URL-encoded base64, base64url, and unencoded slashes', async () => {
    // Find a serial whose request has '/' or '+' in base64 so the encodings differ.
    let serial = 1;
    let b64 = '';
    while (!/[+/]/.test(b64)) b64 = Buffer.from(request((serial++).toString(16))).toString('base64');
    const forms = [
      encodeURIComponent(b64),
      b64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''),
      b64.replace(/\+/g, '%2B'),
    ];
    for (const form of forms) {
      const res = await handler(new Request(`https://h/.well-known/pki/ocsp/${ISSUER}/${form}`), transport);
      expect(res.status, form).toBe(200);
      expect(describeResponse(await res.arrayBuffer())).toContain('Cert Status: good');
      expect(res.headers.get('cache-control')).toMatch(/max-age=\d+/);
    }
    const bad = await handler(new Request(`https://h/.well-known/pki/ocsp/${ISSUER}/%%%`), transport);
    expect(bad.status).toBe(400);
  });

  it('serves the human serial route as JSON, or signed with Accept: application/ocsp-response', async () => {
    const json = await handler(
      new Request(`https://h/.well-known/pki/ocsp/${ISSUER}/serial/0A0B`),
      transport,
    );
    expect(await json.json()).toMatchObject({ serial: '0a0b', status: 'revoked' });
    const signed = await handler(
      new Request(`https://h/.well-known/pki/ocsp/${ISSUER}/serial/0a0b`, {
        headers: { accept: 'application/ocsp-response' },
      }),
      transport,
    );
    expect(describeResponse(await signed.arrayBuffer())).toContain('Cert Status: revoked');
    expect(
      (await handler(new Request(`https://h/.well-known/pki/ocsp/${ISSUER}/serial/xyz`), transport)).status,
    ).toBe(400);
  });

  it('answers unknown issuers with 404 unauthorized, and wrong methods with 405', async () => {
    const res = await post(request('01'), {}, 'iss-other');
    expect(res.status).toBe(404);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(Buffer.from([0x30, 0x03, 0x0a, 0x01, 0x06]));
    const get = await handler(new Request(`https://h/.well-known/pki/ocsp/${ISSUER}`), transport);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });

  it('matches failures by code, so an error from another copy of core is still understood', async () => {
    const failing = (error: unknown) =>
      createOcspHandler({
        source: {
          respond: async () => {
            throw error;
          },
          respondToSerial: async () => null,
          serialStatus: async () => null,
        },
      });
    // What a CertwrightError of a second @certwright/core copy looks like to this one.
    const foreign = Object.assign(new Error('storage busy'), {
      name: 'CertwrightError',
      code: 'unavailable',
    });
    const ask = (handle: ReturnType<typeof createOcspHandler>) =>
      handle(
        new Request(`https://h/.well-known/pki/ocsp/${ISSUER}`, {
          method: 'POST',
          body: new Uint8Array(request('01')),
        }),
        transport,
      );
    const busy = await ask(failing(foreign));
    expect(busy.status).toBe(503);
    expect(Buffer.from(await busy.arrayBuffer())).toEqual(Buffer.from([0x30, 0x03, 0x0a, 0x01, 0x03]));
    const broken = await ask(failing(new Error('relation "certificate_versions" does not exist')));
    expect(broken.status).toBe(500);
    // internalError, and nothing of the cause on the wire.
    expect(Buffer.from(await broken.arrayBuffer())).toEqual(Buffer.from([0x30, 0x03, 0x0a, 0x01, 0x02]));
  });

  it('decodes only bounded base64', () => {
    expect(decodeGetRequest('A'.repeat(100_000), 16 * 1024)).toBeNull();
    expect(decodeGetRequest('MAA', 16)).toEqual(Buffer.from([0x30, 0x00]));
  });

  it('refuses nine CertIDs in one request with malformedRequest and answers eight', async () => {
    const many = (n: number) =>
      der.sequence(
        der.sequence(
          der.sequence(
            ...Array.from({ length: n }, (_, i) =>
              der.sequence(buildCertId(caInfo, (i + 1).toString(16), 'sha1').der),
            ),
          ),
        ),
      );
    const eight = await post(many(8));
    expect(eight.status).toBe(200);
    expect(describeResponse(await eight.arrayBuffer()).match(/Cert Status: good/g)).toHaveLength(8);
    const nine = await post(many(9));
    expect(nine.status).toBe(400);
    expect(Buffer.from(await nine.arrayBuffer())).toEqual(MALFORMED_REQUEST);
  });
});

const MALFORMED_REQUEST = Buffer.from([0x30, 0x03, 0x0a, 0x01, 0x01]);

/** The path text with every character read counted: the decoder's only work is these reads. */
function counted(text: string): { text: string; reads: () => number } {
  let reads = 0;
  const probe = {
    length: text.length,
    charCodeAt(i: number) {
      reads++;
      return text.charCodeAt(i);
    },
  };
  return { text: probe as unknown as string, reads: () => reads };
}

describe('OCSP GET decoding', () => {
  it('answers a path of 16,000 "=" and an "A" with malformedRequest, refusing it before reading a character', async () => {
    const path = `${'='.repeat(16_000)}A`;
    const res = await handler(new Request(`https://h/.well-known/pki/ocsp/${ISSUER}/${path}`), transport);
    expect(res.status).toBe(400);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(MALFORMED_REQUEST);
    const probe = counted(path);
    expect(decodeGetRequest(probe.text, OCSP_GET_MAX_REQUEST_BYTES)).toBeNull();
    expect(probe.reads()).toBe(0);
  });

  it('reads each character of the path at most once, whatever it holds (linear by construction)', () => {
    const cap = maxGetPathLength(OCSP_GET_MAX_REQUEST_BYTES);
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.constantFrom('=', 'A', 'g', '%', '2', 'B', 'F', '/', '+', '-', '_', ' ', '.'),
          maxLength: cap + 8,
        }),
        (text) => {
          const probe = counted(text);
          decodeGetRequest(probe.text, OCSP_GET_MAX_REQUEST_BYTES);
          return probe.reads() <= (text.length <= cap ? text.length : 0);
        },
      ),
      { seed: 0x0c5b, numRuns: 2_000 },
    );
  });

  it('decodes every encoding clients use, up to the GET cap and not a byte more', () => {
    const forms = (b64: string) => [
      b64,
      encodeURIComponent(b64),
      b64.replace(/=+$/, ''),
      b64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''),
      b64.replace(/\+/g, ' '),
      b64.replace(/\+/g, '%2b').replace(/\//g, '%2f').replace(/=/g, '%3d'),
    ];
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: OCSP_GET_MAX_REQUEST_BYTES }), (bytes) => {
        for (const form of forms(Buffer.from(bytes).toString('base64'))) {
          const decoded = decodeGetRequest(form, OCSP_GET_MAX_REQUEST_BYTES);
          if (!decoded || !Buffer.from(decoded).equals(Buffer.from(bytes))) return false;
        }
        return true;
      }),
      { seed: 0x0c5c, numRuns: 300 },
    );
    const over = Buffer.alloc(OCSP_GET_MAX_REQUEST_BYTES + 1, 0xfb).toString('base64');
    expect(decodeGetRequest(over, OCSP_GET_MAX_REQUEST_BYTES)).toBeNull();
    for (const bad of ['MAA==', 'MA=A', 'M===', 'MAA%', 'MAA%zz', 'MA\u00e9', '====']) {
      expect(decodeGetRequest(bad, OCSP_GET_MAX_REQUEST_BYTES), bad).toBeNull();
    }
  });
});

describe('OCSP handler over a source that remembers answers by request bytes', () => {
  it('sends the remembered answer for the same bytes unparsed, parses the rest, and answers null with unauthorized', async () => {
    const remembered = {
      der: Buffer.from('30030a0103', 'hex'),
      producedAt: new Date(),
      nextUpdate: new Date(Date.now() + 60_000),
    };
    const parsedBy: string[] = [];
    const known = createOcspHandler({
      source: {
        respond: async () => {
          parsedBy.push('respond');
          return remembered;
        },
        respondToSerial: async () => null,
        serialStatus: async () => null,
        // Bytes that are no DER request at all: only a hit can answer them with 200.
        knownAnswer: async (issuerId, encoded) =>
          issuerId !== ISSUER
            ? null
            : Buffer.from(encoded).toString() === 'seen before'
              ? remembered
              : undefined,
      },
    });
    const send = (body: string | Uint8Array, issuer = ISSUER) =>
      known(
        new Request(`https://h/.well-known/pki/ocsp/${issuer}`, {
          method: 'POST',
          headers: { 'content-type': 'application/ocsp-request' },
          body: typeof body === 'string' ? body : new Uint8Array(body),
        }),
        transport,
      );
    const hit = await send('seen before');
    expect(hit.status).toBe(200);
    expect(hit.headers.get('cache-control')).toBe('no-store');
    expect(Buffer.from(await hit.arrayBuffer()).equals(remembered.der)).toBe(true);
    expect(parsedBy).toEqual([]);
    expect((await send('never seen')).status).toBe(400);
    expect((await send(request('01'))).status).toBe(200);
    expect(parsedBy).toEqual(['respond']);
    expect((await send('seen before', 'iss-other')).status).toBe(404);
  });
});
