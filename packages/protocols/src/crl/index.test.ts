import { buildCrl, createSelfSignedCertificate, generateKeyPair } from '@certwright/core/pki';
import { beforeAll, describe, expect, it } from 'vitest';
import { type CrlSource, createCrlHandler } from './index.js';

const transport = { remoteAddress: '127.0.0.1' };
let handler: ReturnType<typeof createCrlHandler>;
let crlDer: Buffer;

beforeAll(async () => {
  const key = await generateKeyPair('ECDSA-P256');
  const now = new Date();
  const ca = createSelfSignedCertificate(
    {
      subject: 'CN=CRL unit CA',
      notBefore: now,
      notAfter: new Date(now.getTime() + 86_400_000),
      basicConstraints: { ca: true },
    },
    key.privateKey,
  );
  const nextUpdate = new Date(now.getTime() + 3_600_000);
  crlDer = buildCrl({
    issuerCert: ca.der,
    issuerKey: key.privateKey,
    thisUpdate: now,
    nextUpdate,
    crlNumber: 7n,
    entries: [],
  });
  const source: CrlSource = {
    currentCrl: async (id) =>
      id === 'iss-1' ? { der: crlDer, crlNumber: 7n, thisUpdate: now, nextUpdate } : null,
  };
  handler = createCrlHandler({ source });
});

const get = (path: string, init: RequestInit = {}) =>
  handler(new Request(`https://h${path}`, init), transport);

describe('CRL handler', () => {
  it('serves DER by default and PEM (X509 CRL) when asked', async () => {
    const res = await get('/.well-known/pki/crl/iss-1');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pkix-crl');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(crlDer);
    const pem = await get('/.well-known/pki/crl/iss-1', {
      headers: { accept: 'text/plain, application/x-pem-file' },
    });
    expect(pem.headers.get('content-type')).toBe('application/x-pem-file');
    expect(await pem.text()).toMatch(/^-----BEGIN X509 CRL-----\n[\s\S]+-----END X509 CRL-----\n$/);
  });

  it('answers HEAD without a body, unknown issuers and odd paths with 404, other methods with 405', async () => {
    const head = await get('/.well-known/pki/crl/iss-1', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect((await get('/.well-known/pki/crl/iss-2')).status).toBe(404);
    expect((await get('/.well-known/pki/crl/iss-1/extra')).status).toBe(404);
    expect((await get('/.well-known/pki/crl/..%2Fetc')).status).toBe(404);
    const post = await get('/.well-known/pki/crl/iss-1', { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });
});
