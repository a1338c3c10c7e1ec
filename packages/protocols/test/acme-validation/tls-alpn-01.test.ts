import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';
import { staticResolver } from '@certwright/core/net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ChallengeToValidate,
  type ChallengeValidatorOptions,
  createChallengeValidator,
  keyAuthorizationDigest,
} from '../../src/acme/index.js';
import { acmeCertificate, keyAuthorization, outcome, rejection } from './fixtures.js';

/**
 * tls-alpn-01 (RFC 8737, RFC 8738) against real TLS servers on loopback. The server picks the
 * certificate by SNI, so each identifier below stands for one kind of answer; every certificate
 * is self-signed with our builder, the acmeIdentifier extension added as an extra extension.
 */

const TOKEN = 'alpnToken_1';
const KA = keyAuthorization(TOKEN);

interface Handshake {
  servername: string;
  offered: string[];
}

const handshakes: Handshake[] = [];
let alpnServer: tls.Server;
let plainTlsServer: tls.Server;
let silentServer: net.Server;
let alpnPort = 0;
let plainPort = 0;
let silentPort = 0;
const silentSockets: net.Socket[] = [];

const listen = async (server: net.Server): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};

beforeAll(async () => {
  const good = await acmeCertificate({
    sans: [{ type: 'dns', value: 'good.acme.test' }],
    keyAuthorization: KA,
  });
  const certificates: Record<string, { cert: string; key: string }> = {
    'good.acme.test': good,
    'upper.acme.test': await acmeCertificate({
      sans: [{ type: 'dns', value: 'UPPER.acme.test' }],
      keyAuthorization: KA,
    }),
    '1.0.0.127.in-addr.arpa': await acmeCertificate({
      sans: [{ type: 'ip', value: '127.0.0.1' }],
      keyAuthorization: KA,
    }),
    'wrongsan.acme.test': await acmeCertificate({
      sans: [{ type: 'dns', value: 'other.acme.test' }],
      keyAuthorization: KA,
    }),
    'twosans.acme.test': await acmeCertificate({
      sans: [
        { type: 'dns', value: 'twosans.acme.test' },
        { type: 'dns', value: 'extra.acme.test' },
      ],
      keyAuthorization: KA,
    }),
    'noext.acme.test': await acmeCertificate({
      sans: [{ type: 'dns', value: 'noext.acme.test' }],
      keyAuthorization: KA,
      extension: 'none',
    }),
    'noncritical.acme.test': await acmeCertificate({
      sans: [{ type: 'dns', value: 'noncritical.acme.test' }],
      keyAuthorization: KA,
      extension: 'non-critical',
    }),
    'wrongdigest.acme.test': await acmeCertificate({
      sans: [{ type: 'dns', value: 'wrongdigest.acme.test' }],
      keyAuthorization: keyAuthorization('otherToken'),
    }),
    'bareoctets.acme.test': await acmeCertificate({
      sans: [{ type: 'dns', value: 'bareoctets.acme.test' }],
      keyAuthorization: KA,
      // The digest as a UTF8String instead of an OCTET STRING.
      value: Buffer.concat([Buffer.from([0x0c, 0x20]), keyAuthorizationDigest(KA)]),
    }),
  };
  const contexts = new Map(
    Object.entries(certificates).map(([name, pair]) => [name, tls.createSecureContext(pair)]),
  );
  alpnServer = tls.createServer({
    ...good,
    // Recorded from the ClientHello: the client may finish its handshake before the server's
    // 'secureConnection' fires.
    ALPNCallback: ({ servername, protocols }) => {
      handshakes.push({ servername, offered: protocols });
      return protocols.includes('acme-tls/1') ? 'acme-tls/1' : undefined;
    },
    SNICallback: (name, callback) => callback(null, contexts.get(name) ?? contexts.get('good.acme.test')),
  });
  alpnServer.on('secureConnection', (socket) => {
    socket.on('error', () => {});
    socket.end();
  });
  alpnServer.on('tlsClientError', () => {});
  alpnPort = await listen(alpnServer);
  // Serves the right certificate but does not speak acme-tls/1.
  plainTlsServer = tls.createServer(good);
  plainTlsServer.on('secureConnection', (socket) => {
    socket.on('error', () => {});
    socket.end();
  });
  plainTlsServer.on('tlsClientError', () => {});
  plainPort = await listen(plainTlsServer);
  silentServer = net.createServer((socket) => {
    silentSockets.push(socket);
    socket.on('error', () => {});
  });
  silentPort = await listen(silentServer);
});

afterAll(async () => {
  for (const socket of silentSockets) socket.destroy();
  await Promise.all(
    [alpnServer, plainTlsServer, silentServer].map((s) => new Promise((resolve) => s.close(resolve))),
  );
});

const resolver = staticResolver(
  Object.fromEntries(
    ['good', 'upper', 'wrongsan', 'twosans', 'noext', 'noncritical', 'wrongdigest', 'bareoctets'].map((n) => [
      `${n}.acme.test`,
      '127.0.0.1',
    ]),
  ),
);

const validator = (options: ChallengeValidatorOptions = {}) =>
  createChallengeValidator({
    tlsAlpnPort: alpnPort,
    allowedRanges: ['127.0.0.1'],
    resolver,
    timeoutMs: 10_000,
    ...options,
  });

const challenge = (value: string, type: 'dns' | 'ip' = 'dns'): ChallengeToValidate => ({
  type: 'tls-alpn-01',
  identifier: { type, value },
  token: TOKEN,
  keyAuthorization: KA,
});

describe('tls-alpn-01 validation', () => {
  it('passes with the right certificate, sending the identifier as SNI and offering acme-tls/1', async () => {
    await validator()(challenge('good.acme.test'));
    expect(handshakes).toContainEqual({ servername: 'good.acme.test', offered: ['acme-tls/1'] });
  });

  it('compares the dNSName case-insensitively', async () => {
    await validator()(challenge('upper.acme.test'));
  });

  it('passes for an IP identifier, sending its reverse-DNS name as SNI (RFC 8738 §6)', async () => {
    await validator()(challenge('127.0.0.1', 'ip'));
    expect(handshakes).toContainEqual({ servername: '1.0.0.127.in-addr.arpa', offered: ['acme-tls/1'] });
  });

  it('fails with incorrect_response when the SAN is another name', async () => {
    const { reason, message } = await rejection(validator()(challenge('wrongsan.acme.test')));
    expect(reason).toBe('incorrect_response');
    expect(message).toContain("dNSName 'wrongsan.acme.test'");
    expect(message).toContain("dNSName 'other.acme.test'");
  });

  it('fails with incorrect_response when the certificate has a second SAN', async () => {
    expect(await outcome(validator()(challenge('twosans.acme.test')))).toBe('incorrect_response');
  });

  it('fails with incorrect_response when the acmeIdentifier extension is missing', async () => {
    const { reason, message } = await rejection(validator()(challenge('noext.acme.test')));
    expect(reason).toBe('incorrect_response');
    expect(message).toContain('no acmeIdentifier extension');
  });

  it('fails with incorrect_response when the acmeIdentifier extension is not critical', async () => {
    const { reason, message } = await rejection(validator()(challenge('noncritical.acme.test')));
    expect(reason).toBe('incorrect_response');
    expect(message).toContain('not marked critical');
  });

  it('fails with incorrect_response when the extension holds the digest of another key authorization', async () => {
    expect(await outcome(validator()(challenge('wrongdigest.acme.test')))).toBe('incorrect_response');
  });

  it('fails with incorrect_response when the digest is not wrapped in an OCTET STRING', async () => {
    expect(await outcome(validator()(challenge('bareoctets.acme.test')))).toBe('incorrect_response');
  });

  it('fails with tls_failed when the server does not negotiate acme-tls/1', async () => {
    const { reason, message } = await rejection(
      validator({ tlsAlpnPort: plainPort })(challenge('good.acme.test')),
    );
    expect(reason).toBe('tls_failed');
    expect(message).toContain('acme-tls/1');
  });

  it('refuses an identifier that resolves to loopback when loopback is not listed, without connecting', async () => {
    const before = handshakes.length;
    const v = validator({ allowedRanges: [] });
    expect(await outcome(v(challenge('good.acme.test')))).toBe('address_refused');
    expect(await outcome(v(challenge('127.0.0.1', 'ip')))).toBe('address_refused');
    expect(handshakes.length).toBe(before);
  });

  it('fails with timed_out when the server accepts and never completes the handshake', async () => {
    expect(
      await outcome(validator({ tlsAlpnPort: silentPort, timeoutMs: 500 })(challenge('good.acme.test'))),
    ).toBe('timed_out');
  });

  it('refuses tls-alpn-01 for a wildcard identifier before connecting', async () => {
    expect(await outcome(validator()(challenge('*.good.acme.test')))).toBe('invalid_input');
  });
});
