import { fail } from '@certwright/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { basicCredentials, createEstHandler, type EstAuthority, parseEstPath } from '../index.js';
import type { EstClient } from '../server/enrollment.js';

/** The wire layer alone, over an authority that records what it was given. */
function setup(
  enroll: EstAuthority['enroll'] = async () => ({
    certificate: Buffer.from([0x30, 0]),
    chain: [],
    certificateId: 'mc-1',
    versionId: 'v-1',
  }),
) {
  const seen: { pathId: string | null; operation: string; client: EstClient; body: Uint8Array }[] = [];
  const authority: EstAuthority = {
    caCertificates: async () => [],
    csrAttributes: async () => null,
    enroll: async (pathId, operation, client, body) => {
      seen.push({ pathId, operation, client, body });
      return enroll(pathId, operation, client, body);
    },
  };
  return { seen, handler: createEstHandler({ authority, mtls: true }) };
}

const chain = [new Uint8Array([1, 2, 3])];
const transport = {
  remoteAddress: '192.0.2.7',
  tls: {
    protocol: 'TLSv1.3',
    clientCertificateChain: chain,
    exportKeyingMaterial: () => new Uint8Array(32).fill(5),
  },
};

describe('createEstHandler', () => {
  it('hands the authority the path id, the body bytes and what the connection knows (client chain, exporter, Basic)', async () => {
    const { seen, handler } = setup();
    const res = await handler(
      new Request('https://h/.well-known/est-mtls/fleet/simpleenroll', {
        method: 'POST',
        body: 'MIIB\r\nAAAA\r\n',
        headers: { authorization: `Basic ${Buffer.from('dev:pa:ss').toString('base64')}` },
      }),
      transport,
    );
    expect(res.status).toBe(200);
    expect(seen[0]!.pathId).toBe('fleet');
    expect(seen[0]!.operation).toBe('simpleenroll');
    expect(Buffer.from(seen[0]!.body).toString()).toBe('MIIB\r\nAAAA\r\n');
    expect(seen[0]!.client).toMatchObject({
      mtls: true,
      remoteAddress: '192.0.2.7',
      basic: { username: 'dev', password: 'pa:ss' },
    });
    expect(seen[0]!.client.clientCertificateChain).toEqual(chain);
    expect(seen[0]!.client.exportKeyingMaterial?.(32, 'EXPORTER-Channel-Binding')).toEqual(
      new Uint8Array(32).fill(5),
    );
  });

  it('answers 404 for unknown paths and 405 with Allow for the wrong method, without calling the authority', async () => {
    const { seen, handler } = setup();
    expect(
      (await handler(new Request('https://h/.well-known/est-mtls/fullcmc', { method: 'POST' }), transport))
        .status,
    ).toBe(404);
    expect((await handler(new Request('https://h/.well-known/est-mtls/a/b/cacerts'), transport)).status).toBe(
      404,
    );
    const get = await handler(new Request('https://h/.well-known/est-mtls/simpleenroll'), transport);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const post = await handler(
      new Request('https://h/.well-known/est-mtls/cacerts', { method: 'POST' }),
      transport,
    );
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(seen).toHaveLength(0);
  });

  it('maps failures: 401 empty with a Basic challenge, 429 with Retry-After, 400 for a body over the cap', async () => {
    const reasons = [
      fail('unauthenticated', 'who are you'),
      fail('rate_limited', 'slow down', { extra: { retry_after_seconds: 42 } }),
    ];
    for (const error of reasons) {
      const { handler } = setup(async () => {
        throw error;
      });
      const res = await handler(
        new Request('https://h/.well-known/est-mtls/simpleenroll', { method: 'POST', body: 'x' }),
        transport,
      );
      if (error.reason === 'unauthenticated') {
        expect(res.status).toBe(401);
        expect(await res.text()).toBe('');
        expect(res.headers.get('www-authenticate')).toBe('Basic realm="certwright EST", charset="UTF-8"');
      } else {
        expect(res.status).toBe(429);
        expect(res.headers.get('retry-after')).toBe('42');
      }
    }
    const { handler } = setup();
    const big = await handler(
      new Request('https://h/.well-known/est-mtls/simpleenroll', {
        method: 'POST',
        body: 'A'.repeat(100_000),
      }),
      transport,
    );
    expect(big.status).toBe(400);
  });
});

describe('request parsing of untrusted text', () => {
  it('reads Basic credentials only from a well-formed header, never throwing (seeded fuzz)', () => {
    expect(basicCredentials('Bearer abc')).toBeUndefined();
    expect(basicCredentials(`Basic ${Buffer.from('nocolon').toString('base64')}`)).toBeUndefined();
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (header) => {
        const parsed = basicCredentials(header);
        if (parsed) expect(typeof parsed.username).toBe('string');
      }),
      { seed: 7030, numRuns: 2000 },
    );
    fc.assert(
      fc.property(
        fc.string({ maxLength: 40 }).filter((u) => !u.includes(':')),
        fc.string({ maxLength: 40 }),
        (user, pass) => {
          const header = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
          const parsed = basicCredentials(header);
          expect(parsed).toEqual({
            username: Buffer.from(user).toString(),
            password: Buffer.from(pass).toString(),
          });
        },
      ),
      { seed: 8951, numRuns: 500 },
    );
  });

  it('names a profile and an operation only for the two documented path shapes', () => {
    expect(parseEstPath(['cacerts'])).toEqual({ pathId: null, operation: 'cacerts' });
    expect(parseEstPath(['fleet', 'serverkeygen'])).toEqual({ pathId: 'fleet', operation: 'serverkeygen' });
    expect(parseEstPath(['Fleet', 'cacerts'])).toBeNull();
    expect(parseEstPath(['fleet', 'x', 'cacerts'])).toBeNull();
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 70 }), { maxLength: 4 }), (segments) => {
        const target = parseEstPath(segments);
        if (target?.pathId) expect(target.pathId).toMatch(/^[a-z0-9][a-z0-9._-]{0,63}$/);
      }),
      { seed: 7, numRuns: 2000 },
    );
  });
});
