import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { isCertwrightError } from '@certwright/core';
import { type FuzzTarget, mutatedText, typedOnly } from '@certwright/core/testing';
import fc from 'fast-check';
import { FlattenedSign } from 'jose';
import { describe, expect, it } from 'vitest';
import { parseJwsBody, verifyJws } from './jws.js';
import { isAcmeProblemError } from './problem.js';

const enc = new TextEncoder();
const b64 = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ecJwk = ec.publicKey.export({ format: 'jwk' });
const ed = generateKeyPairSync('ed25519');
const edJwk = ed.publicKey.export({ format: 'jwk' });

async function sign(header: Record<string, unknown>, payload: string, key: KeyObject): Promise<string> {
  const jws = await new FlattenedSign(enc.encode(payload)).setProtectedHeader(header as never).sign(key);
  return JSON.stringify(jws);
}

const URL_ = 'https://acme.test/acme/new-account';
const request = (extra: Record<string, unknown> = {}) => ({
  alg: 'ES256',
  nonce: 'AAAAAAAAAAAAAAAAAAAAAA',
  url: URL_,
  jwk: ecJwk,
  ...extra,
});

/** Expect a typed refusal and return its reason (or ACME type). */
function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(isCertwrightError(error)).toBe(true);
    return isAcmeProblemError(error) ? error.acmeType : (error as { reason: string }).reason;
  }
  throw new Error('expected a refusal');
}

const body = (text: string) => enc.encode(text);
const raw = (header: unknown, payload = '', signature = 'AAAA') =>
  body(JSON.stringify({ protected: b64(header), payload, signature }));

describe('ACME JWS parsing', () => {
  it('reads a flattened JWS signed by a jwk and verifies it', async () => {
    const parsed = parseJwsBody(body(await sign(request(), '{"contact":[]}', ec.privateKey)));
    expect(parsed.header).toMatchObject({ alg: 'ES256', url: URL_, nonce: 'AAAAAAAAAAAAAAAAAAAAAA' });
    expect(parsed.header.jwk?.thumbprint).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await expect(verifyJws(parsed, parsed.header.jwk!)).resolves.toBeUndefined();
  });

  it('verifies EdDSA and refuses a signature by another key', async () => {
    const parsed = parseJwsBody(body(await sign(request({ alg: 'EdDSA', jwk: edJwk }), '', ed.privateKey)));
    await verifyJws(parsed, parsed.header.jwk!);
    const other = generateKeyPairSync('ed25519');
    const forged = parseJwsBody(
      body(await sign(request({ alg: 'EdDSA', jwk: edJwk }), '', other.privateKey)),
    );
    await expect(verifyJws(forged, forged.header.jwk!)).rejects.toMatchObject({
      reason: 'signature_invalid',
    });
  });

  it('verifies what jose signs with every accepted algorithm, and nothing signed over other bytes', async () => {
    const keys = {
      RS256: generateKeyPairSync('rsa', { modulusLength: 2048 }),
      PS256: generateKeyPairSync('rsa', { modulusLength: 2048 }),
      ES256: ec,
      ES384: generateKeyPairSync('ec', { namedCurve: 'P-384' }),
      EdDSA: ed,
    };
    for (const [alg, pair] of Object.entries(keys)) {
      const jwk = pair.publicKey.export({ format: 'jwk' });
      const signed = JSON.parse(await sign(request({ alg, jwk }), '{"a":1}', pair.privateKey));
      const parsed = parseJwsBody(body(JSON.stringify(signed)));
      await expect(verifyJws(parsed, parsed.header.jwk!), alg).resolves.toBeUndefined();
      // The same signature over another payload, and a signature one byte short, are refused.
      const other = parseJwsBody(body(JSON.stringify({ ...signed, payload: b64('{"a":2}') })));
      await expect(verifyJws(other, other.header.jwk!), alg).rejects.toMatchObject({
        reason: 'signature_invalid',
      });
      const short = Buffer.from(signed.signature, 'base64url').subarray(1).toString('base64url');
      const truncated = parseJwsBody(body(JSON.stringify({ ...signed, signature: short })));
      await expect(verifyJws(truncated, truncated.header.jwk!), alg).rejects.toMatchObject({
        reason: 'signature_invalid',
      });
    }
  });

  it('refuses an ES256 signature in DER form (JWS signatures are R || S)', async () => {
    const { sign: derSign } = await import('node:crypto');
    const protectedB64 = b64(request());
    const der = derSign('sha256', Buffer.from(`${protectedB64}.`), ec.privateKey);
    const parsed = parseJwsBody(
      body(JSON.stringify({ protected: protectedB64, payload: '', signature: der.toString('base64url') })),
    );
    await expect(verifyJws(parsed, parsed.header.jwk!)).rejects.toMatchObject({
      reason: 'signature_invalid',
    });
  });

  it("refuses alg 'none', MAC algorithms and unknown ones as badSignatureAlgorithm", () => {
    for (const alg of ['none', 'HS256', 'RS1', 'ES512x']) {
      expect(refusal(() => parseJwsBody(raw(request({ alg }))))).toBe('badSignatureAlgorithm');
    }
  });

  it('refuses an algorithm that does not fit the key', async () => {
    const parsed = parseJwsBody(raw(request({ alg: 'ES384' })));
    await expect(verifyJws(parsed, parsed.header.jwk!)).rejects.toMatchObject({
      acmeType: 'badSignatureAlgorithm',
    });
  });

  it('requires exactly one of jwk and kid', () => {
    expect(refusal(() => parseJwsBody(raw(request({ kid: 'https://acme.test/acme/account/x' }))))).toBe(
      'malformed',
    );
    const { jwk: _jwk, ...noKey } = request();
    expect(refusal(() => parseJwsBody(raw(noKey)))).toBe('malformed');
  });

  it('refuses header members RFC 8555 does not allow, and an unprotected header', () => {
    expect(refusal(() => parseJwsBody(raw(request({ crit: ['b64'], b64: false }))))).toBe('malformed');
    const withHeader = JSON.stringify({
      protected: b64(request()),
      header: {},
      payload: '',
      signature: 'AAAA',
    });
    expect(refusal(() => parseJwsBody(body(withHeader)))).toBe('malformed');
  });

  it('requires a nonce on requests (badNonce) but not on the inner JWS of a key change', () => {
    const { nonce: _nonce, ...noNonce } = request();
    expect(refusal(() => parseJwsBody(raw(noNonce)))).toBe('badNonce');
    expect(() => parseJwsBody(raw(noNonce), 'key-change')).not.toThrow();
  });

  it('refuses a JWK with private key material or an unsupported curve', () => {
    const priv = ec.privateKey.export({ format: 'jwk' });
    expect(refusal(() => parseJwsBody(raw(request({ jwk: priv }))))).toBe('malformed');
    expect(refusal(() => parseJwsBody(raw(request({ jwk: { ...ecJwk, crv: 'secp256k1' } }))))).toBe(
      'key_rejected',
    );
    // A point that is not on the curve never reaches node:crypto.
    expect(refusal(() => parseJwsBody(raw(request({ jwk: { ...ecJwk, y: ecJwk.x } }))))).toBe('key_rejected');
  });

  it('refuses a body over the size cap before parsing it', () => {
    const big = body(JSON.stringify({ protected: 'a'.repeat(70_000), payload: '', signature: 'AAAA' }));
    expect(refusal(() => parseJwsBody(big))).toBe('too_large');
  });

  it('refuses non-canonical base64url and padding', () => {
    const good = JSON.parse(JSON.stringify({ protected: b64(request()), payload: '', signature: 'AAAA' }));
    expect(refusal(() => parseJwsBody(body(JSON.stringify({ ...good, signature: 'AAAA==' }))))).toBe(
      'malformed',
    );
    expect(refusal(() => parseJwsBody(body(JSON.stringify({ ...good, signature: 'AAB' }))))).toBe(
      'malformed',
    );
  });
});

describe('ACME JWS parser fuzz', () => {
  it('throws nothing but typed errors on mutated requests (seeded)', { timeout: 120_000 }, async () => {
    const seeds = [
      await sign(request(), '{"contact":["mailto:a@example.com"]}', ec.privateKey),
      await sign(request({ alg: 'EdDSA', jwk: edJwk }), '', ed.privateKey),
      JSON.stringify({
        protected: b64(request({ jwk: undefined, kid: 'https://acme.test/acme/account/1' })),
        payload: '',
        signature: 'AAAA',
      }),
    ];
    const fragments = [
      '"',
      '{',
      '}',
      '[',
      ']',
      ',',
      ':',
      'null',
      '1e999',
      '\\u0000',
      '"jwk":{}',
      '"kid":1',
      '=',
      '-',
      '_',
      '\u00ff',
      '\ud800',
    ];
    // Mutations of the whole text, and of the decoded protected header re-encoded.
    const headers = seeds.map((s) => Buffer.from(JSON.parse(s).protected, 'base64url').toString());
    const target: FuzzTarget<string> = {
      name: 'acme-jws',
      covers: 'flattened JWS JSON, protected header and JWK',
      inputs: fc.oneof(
        mutatedText(seeds, fragments),
        mutatedText(headers, fragments).map((h) =>
          JSON.stringify({ protected: b64(h), payload: '', signature: 'AAAA' }),
        ),
      ),
      run: (text) => parseJwsBody(enc.encode(text)),
      size: (text) => text.length,
      show: (text) => text,
    };
    fc.assert(typedOnly(target as FuzzTarget<unknown>), { seed: 0xac3e, numRuns: 600 });
  });
});

describe('ACME account key thumbprints', () => {
  it('agree with jose’s RFC 7638 thumbprint for RSA, EC and Ed25519 keys', async () => {
    const { calculateJwkThumbprint } = await import('jose');
    const { parsePublicJwk } = await import('@certwright/core/pki');
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' });
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({ format: 'jwk' });
    for (const jwk of [rsa, ecJwk, p384, edJwk]) {
      expect(parsePublicJwk(jwk).thumbprint).toBe(await calculateJwkThumbprint(jwk as never, 'sha256'));
    }
  });
});

describe('ACME problem types', () => {
  it('reports validator failures as the four classes clients know', async () => {
    const { problemForReason } = await import('./problem.js');
    expect(problemForReason('address_refused').type).toBe('connection');
    expect(problemForReason('connection_failed').type).toBe('connection');
    expect(problemForReason('timed_out').type).toBe('connection');
    expect(problemForReason('dns_failed').type).toBe('dns');
    expect(problemForReason('tls_failed').type).toBe('tls');
    expect(problemForReason('incorrect_response').type).toBe('incorrectResponse');
    expect(problemForReason('invalid_state', { endpoint: 'order/:id/finalize' })).toEqual({
      type: 'orderNotReady',
      status: 403,
    });
    expect(problemForReason('invalid_state')).toEqual({ type: 'malformed', status: 409 });
  });
});
