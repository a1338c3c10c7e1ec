import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@certwright/core';
import { createAdministratorClient } from '@certwright/core/net';
import {
  certificateToPem,
  createSelfSignedCertificate,
  exportPkcs8Pem,
  generateKeyPair,
} from '@certwright/core/pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * URLs an administrator names (here: an OIDC issuer) reach public and private networks only,
 * and every failed fetch reads the same, the cause logged (docs/operations/outbound-connections.md).
 * Servers here listen on 127.0.0.1; the special-range URLs are address literals the guard refuses
 * before any socket is opened.
 */

const logged: { fields: Record<string, unknown>; message: string | undefined }[] = [];
const logger: Logger = {
  debug: () => {},
  info: () => {},
  warn: (fields, message) => logged.push({ fields: { ...fields }, message }),
  error: (fields, message) => logged.push({ fields: { ...fields }, message }),
  child: () => logger,
};

async function tlsServer(handler: Parameters<typeof createHttpsServer>[1]) {
  const key = await generateKeyPair('ECDSA-P256');
  const cert = certificateToPem(
    createSelfSignedCertificate(
      {
        subject: 'CN=127.0.0.1',
        notBefore: new Date(Date.now() - 60_000),
        notAfter: new Date(Date.now() + 86_400_000),
        subjectAltNames: [{ type: 'ip', value: '127.0.0.1' }],
      },
      key.privateKey,
    ).der,
  );
  const server = createHttpsServer({ cert, key: exportPkcs8Pem(key.privateKey) }, handler);
  let connections = 0;
  server.on('connection', () => {
    connections++;
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    server,
    cert,
    origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
  };
}

const discover = (app: TestApp, issuer: string) =>
  app.call('POST', '/api/v1/auth/oidc/test', {
    issuer,
    client_id: 'cw',
    redirect_uri: 'https://cw.example.test/auth/oidc/callback',
  });

describe('administrator-named URLs (OIDC discovery)', () => {
  let strict: TestApp;
  let rig: TestApp;
  let trusted: Awaited<ReturnType<typeof tlsServer>>;
  let untrusted: Awaited<ReturnType<typeof tlsServer>>;
  const servers: Server[] = [];

  beforeAll(async () => {
    trusted = await tlsServer((req, res) => {
      if (req.url?.startsWith('/error/')) {
        res.writeHead(500);
        res.end('internal');
      } else if (req.url?.startsWith('/html/')) {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>an internal wiki</html>');
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"not":"a discovery document"}');
      }
    });
    untrusted = await tlsServer((_req, res) => res.end('{}'));
    servers.push(trusted.server, untrusted.server);
    // The configuration the server runs with: no loopback.
    strict = await createTestApp({ handler: { oidc: { ca: trusted.cert } } });
    // A test rig: the loopback opt-in, so failures of real listeners can be compared.
    rig = await createTestApp({
      logger,
      handler: {
        oidc: { ca: trusted.cert, outbound: createAdministratorClient({ loopbackForTests: true }) },
      },
    });
  }, 180_000);
  afterAll(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
    await strict?.close();
    await rig?.close();
  });

  it('refuses loopback, link-local, documentation, benchmarking and reserved space without connecting', async () => {
    const before = trusted.connections();
    const refused: [string, RegExp][] = [
      [`${trusted.origin}/`, /loopback/],
      ['https://[::1]/', /loopback/],
      ['https://169.254.10.10/', /link-local/],
      ['https://[fe80::1]/', /link-local/],
      ['https://192.0.2.1/', /documentation/],
      ['https://198.51.100.1/', /documentation/],
      ['https://203.0.113.1/', /documentation/],
      ['https://[2001:db8::1]/', /documentation/],
      ['https://198.18.0.1/', /benchmarking/],
      ['https://240.0.0.1/', /reserved/],
      ['https://169.254.169.254/', /metadata/],
    ];
    for (const [issuer, why] of refused) {
      const res = await discover(strict, issuer);
      expect(res.status, issuer).toBe(200);
      expect(res.body.ok, issuer).toBe(false);
      expect(res.body.error, issuer).toMatch(why);
      expect(res.body.error, issuer).toMatch(/never allowed as a destination/);
    }
    expect(trusted.connections()).toBe(before);
  });

  it('answers one sentence for every failed fetch, whatever failed, and logs the cause', async () => {
    const closed = await tlsServer(() => {});
    const closedOrigin = closed.origin;
    await new Promise((r) => closed.server.close(r));
    const failing = [
      `${closedOrigin}/`, // nothing listens
      `${untrusted.origin}/`, // a TLS certificate nobody trusts
      `${trusted.origin}/error/`, // HTTP 500
      `${trusted.origin}/html/`, // a page that is not JSON
      `${trusted.origin}/json/`, // JSON that is no discovery document
    ];
    const errors = new Set<string>();
    logged.length = 0;
    for (const issuer of failing) {
      const res = await discover(rig, issuer);
      expect(res.body.ok, issuer).toBe(false);
      errors.add(res.body.error);
    }
    expect([...errors]).toEqual([
      "the provider's discovery document could not be fetched; the server log has the cause",
    ]);
    // Each cause is in the log, the same number of times as there were failures.
    expect(logged.filter((e) => e.fields.err !== undefined)).toHaveLength(failing.length);
  });

  it('reports a stored provider whose discovery fails with the same sentence', async () => {
    const created = await rig.call('POST', '/api/v1/auth/oidc/providers', {
      id: 'internal-wiki',
      name: 'Internal wiki',
      issuer: `${trusted.origin}/html/`,
      client_id: 'cw',
      redirect_uri: 'https://cw.example.test/auth/oidc/callback',
    });
    expect(created.status).toBe(201);
    const status = await rig.call('POST', '/api/v1/auth/oidc/providers/internal-wiki/refresh');
    expect(status.status).toBe(200);
    expect(status.body.last_error).toBe(
      "the provider's discovery document could not be fetched; the server log has the cause",
    );
  });
});
