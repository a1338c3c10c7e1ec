/**
 * Rigs for the ACME issuer connector tests: Debian's pebble with real validation (http-01
 * against this process's listener, dns-01 through pebble-challtestsrv), and an in-process
 * certwright (PGlite, composed handler) whose `/.well-known/acme-challenge/` answers pebble.
 */
import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer, request as httpRequest, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { startPebble } from '../../../bench/support/pebble.js';
import { type CertwrightHandler, createHandler } from '../../../packages/api/src/index.js';
import {
  type AcmeConnectorDeps,
  type Clock,
  createServices,
  type Handler,
  SecretBox,
  type Services,
  SYSTEM_ACTOR,
  silentLogger,
  systemClock,
} from '../../../packages/core/src/index.js';
import { createAdministratorClient } from '../../../packages/core/src/net/index.js';
import {
  certificateToPem,
  createSelfSignedCertificate,
  exportPkcs8Pem,
  generateKeyPair,
} from '../../../packages/core/src/pki/index.js';
import { createRequestListener } from '../../../packages/server/src/index.js';
import { createPgliteStorage } from '../../../packages/storage-pg/src/index.js';
import { createMigratedPgliteStorage } from '../../../packages/storage-pg/src/testing.js';

/** A self-signed TLS certificate for 127.0.0.1 (also its own trust anchor). */
export async function loopbackTls(): Promise<{ certPem: string; keyPem: string }> {
  const key = await generateKeyPair('ECDSA-P256');
  const cert = createSelfSignedCertificate(
    {
      subject: 'CN=127.0.0.1',
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + 86_400_000),
      subjectAltNames: [{ type: 'ip', value: '127.0.0.1' }],
      basicConstraints: { ca: true },
    },
    key.privateKey,
  );
  return { certPem: certificateToPem(cert.der), keyPem: exportPkcs8Pem(key.privateKey) };
}

export interface RealPebble {
  directoryUrl: string;
  /** Trust anchor of pebble's own TLS listener (what `ca_bundle_pem` holds). */
  tlsCa: string;
  /** A GET on pebble's management interface (roots, cert status). */
  manage(path: string): Promise<{ status: number; body: string }>;
  stop(): Promise<void>;
}

/**
 * Pebble validating for real: http-01 on `httpPort` of the name (resolved through `dnsServer`,
 * pebble-challtestsrv answering 127.0.0.1), dns-01 TXT from the same server. Nonces are
 * rejected at random (PEBBLE_WFE_NONCEREJECT) so the client's badNonce retry is exercised.
 */
export async function startRealPebble(options: {
  httpPort: number;
  dnsServer: string;
  nonceRejectPercent?: number;
}): Promise<RealPebble> {
  const pebble = await startPebble({
    validation: { httpPort: options.httpPort, dnsServer: options.dnsServer },
    ...(options.nonceRejectPercent === undefined ? {} : { nonceRejectPercent: options.nonceRejectPercent }),
  });
  const manage = async (path: string) => {
    const { request } = await import('node:https');
    return new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: pebble.managementPort, path, method: 'GET', ca: pebble.ca },
        (res) => {
          let body = '';
          res.on('data', (c) => {
            body += c;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });
  };
  return { directoryUrl: pebble.directoryUrl, tlsCa: pebble.ca, manage, stop: pebble.stop };
}

export interface CertwrightApp {
  services: Services;
  /** The composed handler; its `servers.acme` holds the EAB keys. */
  handler: CertwrightHandler;
  ids: { owner: string; team: string };
  close(): Promise<void>;
}

/** Real services on in-memory PGlite, the composed handler, an owner and a team. */
export async function createCertwrightApp(
  clock: Clock = systemClock,
  options: { acmeIssuer?: AcmeConnectorDeps } = {},
): Promise<CertwrightApp> {
  const storage = await createMigratedPgliteStorage({ secretBox: new SecretBox(randomBytes(32)), clock });
  const services = createServices(
    { storage, clock, logger: silentLogger },
    // The CAs of these tests (pebble, another certwright) listen on 127.0.0.1: the test-only
    // loopback opt-in admits them, as no configuration does.
    {
      acmeIssuer: { outbound: createAdministratorClient({ loopbackForTests: true }), ...options.acmeIssuer },
    },
  );
  const handler = createHandler({ auth: { type: 'none' }, services, rateLimits: { enrollment: 0 } });
  const owner = await services.owners.create(SYSTEM_ACTOR, {
    name: 'ACME owner',
    email: 'acme@example.test',
  });
  const team = await services.teams.create(SYSTEM_ACTOR, { name: 'ACME team' });
  return { services, handler, ids: { owner: owner.id, team: team.id }, close: () => storage.close() };
}

/** The handler over plain HTTP on 127.0.0.1 (what an ACME CA's http-01 validation reaches). */
export async function listenHttp(
  handler: Handler,
  port = 0,
): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const server = createHttpServer(createRequestListener(handler));
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** The handler over TLS on 127.0.0.1 with a self-signed certificate (returned as `ca`). */
export async function listenHttps(
  handler: Handler,
): Promise<{ port: number; ca: string; close(): Promise<void> }> {
  const tls = await loopbackTls();
  const server = createHttpsServer({ cert: tls.certPem, key: tls.keyPem }, createRequestListener(handler));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    ca: tls.certPem,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A plain GET on 127.0.0.1 with a Host header (what a CA's http-01 validation sends). */
export function httpGet(port: number, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'GET', headers: { host } }, (res) => {
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
