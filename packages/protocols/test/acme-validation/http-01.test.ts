import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { staticResolver } from '@certwright/core/net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The outbound client's own test DNS server (core's tests), not a second one.
import { startDnsServer } from '../../../core/test/net/dns-server.js';
import {
  type ChallengeToValidate,
  type ChallengeValidatorOptions,
  createChallengeValidator,
} from '../../src/acme/index.js';
import { acmeCertificate, keyAuthorization, outcome, rejection } from './fixtures.js';

/**
 * http-01 (RFC 8555 §8.3) against a real HTTP server on loopback. The server is reachable only
 * because the validator lists 127.0.0.1 (or ::1) in its allowed ranges; names resolve through a
 * static table, so the guard's decisions are proven without real DNS.
 */

interface Seen {
  path: string;
  host: string | undefined;
}

const seen: Seen[] = [];
let server: http.Server;
let port = 0;
let tlsServer: https.Server;
let tlsPort = 0;
let v6Server: http.Server | undefined;
let v6Port = 0;
let v6Unavailable = '';
/** Called with the path of every request, before it is answered. */
let onRequest: (path: string) => void = () => {};

const PREFIX = '/.well-known/acme-challenge/';

function handler(req: http.IncomingMessage, res: http.ServerResponse): void {
  const path = req.url ?? '';
  seen.push({ path, host: req.headers.host });
  onRequest(path);
  const token = path.startsWith(PREFIX) ? path.slice(PREFIX.length) : '';
  const [kind, n] = token.split('_');
  switch (kind) {
    case 'good':
      res.end(`${keyAuthorization(token)}\r\n \n`);
      return;
    case 'wrong':
      res.end(`${keyAuthorization('someOtherToken')}`);
      return;
    case 'missing':
      res.writeHead(404).end('not here');
      return;
    case 'big':
      res.end(`${keyAuthorization(token)}${' '.repeat(20_000)}`);
      return;
    case 'hang':
      return;
    case 'tometadata':
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      return;
    case 'tometadataname':
      res.writeHead(301, { location: 'http://metadata.acme.test/latest/meta-data/' }).end();
      return;
    case 'hop':
      // To another name that resolves to a checked address, which answers for this token.
      res.writeHead(302, { location: `http://other.acme.test:${port}${PREFIX}for-${token}` }).end();
      return;
    case 'tohttps':
      res.writeHead(307, { location: `https://other.acme.test:${tlsPort}${PREFIX}for-${token}` }).end();
      return;
    case 'for-hop':
    case 'for-tohttps':
      res.end(keyAuthorization(token.slice('for-'.length)));
      return;
    case 'badport':
      res.writeHead(302, { location: `http://good.acme.test:${port + 1}${PREFIX}good_x` }).end();
      return;
    case 'loop': {
      const next = Number(n ?? 0) + 1;
      res.writeHead(302, { location: `${PREFIX}loop_${next}` }).end();
      return;
    }
    default:
      res.writeHead(404).end();
  }
}

beforeAll(async () => {
  server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  // Self-signed, for a name the validator never verifies it against.
  const selfSigned = await acmeCertificate({
    sans: [{ type: 'dns', value: 'unrelated.acme.test' }],
    keyAuthorization: keyAuthorization('x'),
  });
  tlsServer = https.createServer(selfSigned, handler);
  await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
  tlsPort = (tlsServer.address() as AddressInfo).port;
  const v6 = http.createServer(handler);
  try {
    await new Promise<void>((resolve, reject) => {
      v6.once('error', reject);
      v6.listen(0, '::1', resolve);
    });
    v6Server = v6;
    v6Port = (v6.address() as AddressInfo).port;
  } catch (error) {
    v6Unavailable = `IPv6 loopback unavailable here (${(error as { code?: string }).code})`;
  }
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  tlsServer.closeAllConnections();
  await new Promise((resolve) => tlsServer.close(resolve));
  if (v6Server) {
    v6Server.closeAllConnections();
    await new Promise((resolve) => v6Server!.close(resolve));
  }
});

const resolver = staticResolver({
  'good.acme.test': '127.0.0.1',
  'other.acme.test': '127.0.0.1',
  'metadata.acme.test': '169.254.169.254',
});

const validator = (options: ChallengeValidatorOptions = {}) =>
  createChallengeValidator({
    httpPort: port,
    allowedRanges: ['127.0.0.1'],
    resolver,
    timeoutMs: 10_000,
    ...options,
  });

const challenge = (token: string, host = 'good.acme.test'): ChallengeToValidate => ({
  type: 'http-01',
  identifier: { type: 'dns', value: host },
  token,
  keyAuthorization: keyAuthorization(token),
});

describe('http-01 validation', () => {
  it('passes when the server answers the key authorization (trailing whitespace ignored), asked with the identifier as Host', async () => {
    await validator()(challenge('good_1'));
    const request = seen.find((s) => s.path === `${PREFIX}good_1`);
    expect(request?.host).toBe(`good.acme.test:${port}`);
  });

  it('passes for an IPv4 identifier, fetched from the address itself', async () => {
    await validator()({ ...challenge('good_ip'), identifier: { type: 'ip', value: '127.0.0.1' } });
    expect(seen.find((s) => s.path === `${PREFIX}good_ip`)?.host).toBe(`127.0.0.1:${port}`);
  });

  it('passes for an IPv6 identifier, its literal bracketed in the URL and the Host header', async (ctx) => {
    if (!v6Server) ctx.skip(v6Unavailable);
    const v = validator({ httpPort: v6Port, allowedRanges: ['::1'] });
    await v({ ...challenge('good_v6'), identifier: { type: 'ip', value: '::1' } });
    expect(seen.find((s) => s.path === `${PREFIX}good_v6`)?.host).toBe(`[::1]:${v6Port}`);
  });

  it('fails with incorrect_response naming what was expected and what was seen for a wrong body', async () => {
    const { reason, message } = await rejection(validator()(challenge('wrong_1')));
    expect(reason).toBe('incorrect_response');
    expect(message).toContain(`expected '${keyAuthorization('wrong_1')}'`);
    expect(message).toContain(`got '${keyAuthorization('someOtherToken')}'`);
  });

  it('fails with incorrect_response when the server answers 404', async () => {
    const { reason, message } = await rejection(validator()(challenge('missing_1')));
    expect(reason).toBe('incorrect_response');
    expect(message).toContain('HTTP 404');
  });

  it('fails with incorrect_response when the answer is larger than 8 KiB', async () => {
    expect(await outcome(validator()(challenge('big_1')))).toBe('incorrect_response');
  });

  it('follows a redirect to another name, re-checked by the guard', async () => {
    await validator()(challenge('hop_1'));
    expect(seen.some((s) => s.path === `${PREFIX}for-hop_1` && s.host === `other.acme.test:${port}`)).toBe(
      true,
    );
  });

  it('follows a redirect to https on the configured TLS port without verifying its certificate', async () => {
    await validator({ tlsAlpnPort: tlsPort })(challenge('tohttps_1'));
    expect(seen.some((s) => s.path === `${PREFIX}for-tohttps_1`)).toBe(true);
  });

  it('refuses a redirect to https on a port that is not configured (connection_failed)', async () => {
    const { reason, message } = await rejection(validator()(challenge('tohttps_2')));
    expect(reason).toBe('connection_failed');
    expect(message).toContain('is not followed');
  });

  it('resolves the identifier through validationResolver when one is set', async () => {
    const dns = await startDnsServer({ 'viaserver.acme.test': ['127.0.0.1'] });
    try {
      const v = createChallengeValidator({
        httpPort: port,
        allowedRanges: ['127.0.0.1'],
        validationResolver: dns.address,
        timeoutMs: 10_000,
      });
      await v(challenge('good_viaserver', 'viaserver.acme.test'));
      expect(dns.questions).toContain('viaserver.acme.test A');
    } finally {
      await dns.close();
    }
  });

  it('refuses a redirect to the cloud metadata address (address_refused)', async () => {
    expect(await outcome(validator()(challenge('tometadata_1')))).toBe('address_refused');
  });

  it('refuses a redirect to a name that resolves to the cloud metadata address (address_refused)', async () => {
    // Even with every private range allowed: metadata is never admitted.
    const v = validator({ allowedRanges: ['127.0.0.1', '0.0.0.0/0'] });
    expect(await outcome(v(challenge('tometadataname_1')))).toBe('address_refused');
  });

  it('refuses a redirect to a port other than 80/443 or the configured ones (connection_failed)', async () => {
    const { reason, message } = await rejection(validator()(challenge('badport_1')));
    expect(reason).toBe('connection_failed');
    expect(message).toContain('is not followed');
  });

  it('stops after 10 redirects (connection_failed)', async () => {
    const before = seen.filter((s) => s.path.includes('loop_')).length;
    expect(await outcome(validator()(challenge('loop_0')))).toBe('connection_failed');
    expect(seen.filter((s) => s.path.includes('loop_')).length - before).toBe(11);
  });

  it('refuses an identifier that resolves to loopback when loopback is not listed, without connecting', async () => {
    const before = seen.length;
    const v = validator({ allowedRanges: ['10.0.0.0/8', '0.0.0.0/0'] });
    expect(await outcome(v(challenge('good_2')))).toBe('address_refused');
    expect(await outcome(v({ ...challenge('good_3'), identifier: { type: 'ip', value: '127.0.0.1' } }))).toBe(
      'address_refused',
    );
    expect(seen.length).toBe(before);
  });

  it('fails with dns_failed for a name that does not resolve', async () => {
    expect(await outcome(validator()(challenge('good_4', 'nowhere.acme.test')))).toBe('dns_failed');
  });

  it('fails with connection_failed when nothing listens on the port', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(await outcome(validator({ httpPort: closedPort })(challenge('good_5')))).toBe('connection_failed');
  });

  it('fails with timed_out when the server never answers', async () => {
    expect(await outcome(validator({ timeoutMs: 500 })(challenge('hang_1')))).toBe('timed_out');
  });

  it('fails with timed_out when the name lookup never answers', async () => {
    const v = validator({ timeoutMs: 300, resolver: () => new Promise<string[]>(() => {}) });
    expect(await outcome(v(challenge('good_6')))).toBe('timed_out');
  });

  it('stops with timed_out as soon as the caller aborts', async () => {
    const controller = new AbortController();
    onRequest = (path) => {
      if (path.endsWith('hang_2')) controller.abort();
    };
    try {
      const v = validator({ timeoutMs: 600_000 });
      expect(await outcome(v(challenge('hang_2'), controller.signal))).toBe('timed_out');
    } finally {
      onRequest = () => {};
    }
  });
});
