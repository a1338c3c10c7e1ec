/**
 * EST (RFC 7030) against real clients: curl and the openssl CLI, and a second, independent
 * client written on Python's standard library (support/est_client.py), over a real HTTPS
 * listener on 127.0.0.1 (TLS 1.3 only, client certificates requested but not required, as the
 * server runs it) serving the composed handler over real services on PGlite. Every artifact
 * is read by openssl, not by certwright's own parsers.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { fileURLToPath } from 'node:url';
import {
  type Handler,
  SecretBox,
  type Services,
  SYSTEM_ACTOR,
  silentLogger,
  systemClock,
} from '@certwright/core';
import { createCertificationRequest, generateKeyPair } from '@certwright/core/pki';
import { certwright } from '@certwright/host-express';
import { certwrightPlugin } from '@certwright/host-fastify';
import { createRequestListener } from '@certwright/server';
import express from 'express';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler } from '../../packages/api/src/index.js';
import { createServices } from '../../packages/core/src/index.js';
import { createEstHandler, TLS_EXPORTER_LABEL } from '../../packages/protocols/src/est/index.js';
import type { createPgliteStorage } from '../../packages/storage-pg/src/index.js';
import { createMigratedPgliteStorage } from '../../packages/storage-pg/src/testing.js';
import { createTestTls, serverTlsOptions, type TestTls } from './support/tls.js';

const KEY = 'est-interop-key-0123456789abcdef';
const PASSWORD = 'interop device password';
const CLIENT = fileURLToPath(new URL('./support/est_client.py', import.meta.url));

let tls: TestTls;
let server: Server;
let origin: string;
let services: Services;
let storage: Awaited<ReturnType<typeof createPgliteStorage>>;
let dir: string;
let handler: ReturnType<typeof createHandler> | undefined;

const path = (name: string) => join(dir, name);
const write = (name: string, content: string | Uint8Array) => {
  writeFileSync(path(name), content);
  return path(name);
};

/** Runs a client asynchronously: the server lives in this process and must keep answering. */
function run(
  cmd: string,
  args: string[],
  input?: string,
): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = execFile(cmd, args, { cwd: dir, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ code, out: stdout, err: stderr });
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

async function ok(cmd: string, args: string[]): Promise<string> {
  const result = await run(cmd, args);
  expect(result.code, `${cmd} ${args.join(' ')}\n${result.err}`).toBe(0);
  return result.out;
}

/** curl over TLS 1.3 trusting the test CA; writes the body to `out` and returns status and headers. */
async function curl(
  url: string,
  out: string,
  extra: string[] = [],
): Promise<{ status: number; headers: string }> {
  const headers = path(`${out}.headers`);
  const result = await run('curl', [
    '--silent',
    '--show-error',
    '--tlsv1.3',
    '--cacert',
    path('tls-ca.pem'),
    '--dump-header',
    headers,
    '--output',
    path(out),
    '--write-out',
    '%{http_code}',
    ...extra,
    `${origin}${url}`,
  ]);
  expect(result.code, result.err).toBe(0);
  return { status: Number(result.out), headers: readFileSync(headers, 'utf8') };
}

/** A new key and a DER CSR for `cn` (and the same name as a DNS SAN), made by openssl req. */
async function csr(name: string, cn: string, key: 'ec' | 'rsa' = 'ec'): Promise<void> {
  const keyArgs =
    key === 'ec' ? ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'] : ['-newkey', 'rsa:2048'];
  await ok('openssl', [
    'req',
    '-new',
    ...keyArgs,
    '-nodes',
    '-keyout',
    path(`${name}.key`),
    '-subj',
    `/CN=${cn}`,
    '-addext',
    `subjectAltName=DNS:${cn}`,
    '-addext',
    'extendedKeyUsage=clientAuth',
    '-outform',
    'DER',
    '-out',
    path(`${name}.csr.der`),
  ]);
  await ok('openssl', ['base64', '-in', path(`${name}.csr.der`), '-out', path(`${name}.csr.b64`)]);
}

/** A certs-only answer (base64) as PEM certificates, decoded by openssl. */
async function certsOf(b64: string, pemOut: string): Promise<string> {
  await ok('openssl', ['base64', '-d', '-in', path(b64), '-out', path(`${b64}.der`)]);
  await ok('openssl', [
    'pkcs7',
    '-inform',
    'DER',
    '-in',
    path(`${b64}.der`),
    '-print_certs',
    '-out',
    path(pemOut),
  ]);
  return readFileSync(path(pemOut), 'utf8');
}

const publicKeyOf = (args: string[]) => ok('openssl', args);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cw-est-interop-'));
  tls = createTestTls();
  write('tls-ca.pem', tls.caPem);
  write('client.pem', tls.clientCertPem);
  write('client.key', tls.clientKeyPem);
  server = createServer(
    serverTlsOptions(tls),
    createRequestListener((req, t) => handler!(req, t)),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  storage = await createMigratedPgliteStorage({
    secretBox: new SecretBox(randomBytes(32)),
    clock: systemClock,
  });
  services = createServices(
    { storage, clock: systemClock, logger: silentLogger },
    { pki: { publicBaseUrl: origin } },
  );
  handler = createHandler({ auth: { type: 'api-key', secret: KEY }, services });
  await services.profiles.update(SYSTEM_ACTOR, 'prof-default', {
    required_csr_attributes: ['CN'],
    est: {
      enabled: true,
      server_keygen: true,
      basic_credentials: [{ username: 'device', password: PASSWORD }],
    },
  });
  // The mutual-TLS profile trusts the CA of the test TLS client certificate.
  await services.profiles.create(SYSTEM_ACTOR, {
    name: 'EST fleet',
    enrollment: {
      issuer_id: 'iss-local',
      owner_id: 'own-default',
      team_id: 'team-default',
      renewal_policy_id: 'rp-default',
    },
    est: { enabled: true, path_id: 'fleet', mtls_trust_bundle_path: write('fleet-bundle.pem', tls.caPem) },
  });
  // Channel binding over real TLS: the same bundle, and the tls-exporter value required.
  await services.profiles.create(SYSTEM_ACTOR, {
    name: 'EST bound',
    enrollment: {
      issuer_id: 'iss-local',
      owner_id: 'own-default',
      team_id: 'team-default',
      renewal_policy_id: 'rp-default',
    },
    est: {
      enabled: true,
      path_id: 'bound',
      mtls_trust_bundle_path: path('fleet-bundle.pem'),
      require_channel_binding: true,
    },
  });
}, 120_000);

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await storage?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('EST with curl and openssl over TLS 1.3', () => {
  it('cacerts: a base64 certs-only PKCS#7 that openssl reads as the issuer chain', async () => {
    const res = await curl('/.well-known/est/cacerts', 'cacerts.b64');
    expect(res.status).toBe(200);
    expect(res.headers).toMatch(/content-type: application\/pkcs7-mime; smime-type=certs-only/i);
    const pem = await certsOf('cacerts.b64', 'cacerts.pem');
    const chain = await services.pki.lifecycle.caChain('iss-local');
    expect(pem.match(/-----BEGIN CERTIFICATE-----/g)).toHaveLength(chain.length);
    write('est-chain.pem', chain.join(''));
  });

  it('csrattrs: a DER sequence openssl parses, naming commonName', async () => {
    const res = await curl('/.well-known/est/csrattrs', 'csrattrs.b64');
    expect(res.status).toBe(200);
    await ok('openssl', ['base64', '-d', '-in', path('csrattrs.b64'), '-out', path('csrattrs.der')]);
    const parsed = await ok('openssl', ['asn1parse', '-inform', 'DER', '-in', path('csrattrs.der')]);
    expect(parsed).toMatch(/OBJECT\s+:commonName/);
  });

  it('simpleenroll with Basic; 401 with an empty body for a wrong password or none; 400 for a corrupt CSR', async () => {
    await csr('dev', 'dev1.est.interop.test');
    const enrolled = await curl('/.well-known/est/simpleenroll', 'dev.p7.b64', [
      '--user',
      `device:${PASSWORD}`,
      '--header',
      'Content-Type: application/pkcs10',
      '--data-binary',
      `@${path('dev.csr.b64')}`,
    ]);
    expect(enrolled.status).toBe(200);
    await certsOf('dev.p7.b64', 'dev.pem');
    await ok('openssl', ['verify', '-CAfile', path('est-chain.pem'), path('dev.pem')]);
    expect(await publicKeyOf(['x509', '-in', path('dev.pem'), '-noout', '-pubkey'])).toBe(
      await publicKeyOf(['pkey', '-in', path('dev.key'), '-pubout']),
    );

    for (const auth of [['--user', 'device:not the password'], []]) {
      const refused = await curl('/.well-known/est/simpleenroll', 'refused.txt', [
        ...auth,
        '--data-binary',
        `@${path('dev.csr.b64')}`,
      ]);
      expect(refused.status).toBe(401);
      expect(refused.headers).toMatch(/www-authenticate: Basic realm=/i);
      expect(readFileSync(path('refused.txt'), 'utf8')).toBe('');
    }

    write('corrupt.b64', `${readFileSync(path('dev.csr.b64'), 'utf8').slice(0, 120)}\n`);
    const corrupt = await curl('/.well-known/est/simpleenroll', 'corrupt.txt', [
      '--user',
      `device:${PASSWORD}`,
      '--data-binary',
      `@${path('corrupt.b64')}`,
    ]);
    expect(corrupt.status).toBe(400);
  });

  it('simplereenroll with the TLS client certificate and a new key', async () => {
    await csr('next', 'dev1.est.interop.test');
    const res = await curl('/.well-known/est/simplereenroll', 'next.p7.b64', [
      '--cert',
      path('dev.pem'),
      '--key',
      path('dev.key'),
      '--data-binary',
      `@${path('next.csr.b64')}`,
    ]);
    expect(res.status, readFileSync(path('next.p7.b64'), 'utf8')).toBe(200);
    await certsOf('next.p7.b64', 'next.pem');
    expect(await publicKeyOf(['x509', '-in', path('next.pem'), '-noout', '-pubkey'])).toBe(
      await publicKeyOf(['pkey', '-in', path('next.key'), '-pubout']),
    );
    const serial = (await ok('openssl', ['x509', '-in', path('next.pem'), '-noout', '-serial']))
      .trim()
      .split('=')[1]!;
    const version = await storage.versions.findBySerial('iss-local', serial.toLowerCase().replace(/^0+/, ''));
    const first = (await ok('openssl', ['x509', '-in', path('dev.pem'), '-noout', '-serial']))
      .trim()
      .split('=')[1]!;
    const firstVersion = await storage.versions.findBySerial(
      'iss-local',
      first.toLowerCase().replace(/^0+/, ''),
    );
    expect(version?.certificate_id).toBe(firstVersion?.certificate_id);
  });

  it('serverkeygen: openssl cms -decrypt opens the key with the CSR key, and it matches the certificate', async () => {
    await csr('transport', 'keygen.est.interop.test', 'rsa');
    const res = await curl('/.well-known/est/serverkeygen', 'keygen.multipart', [
      '--user',
      `device:${PASSWORD}`,
      '--data-binary',
      `@${path('transport.csr.b64')}`,
    ]);
    expect(res.status).toBe(200);
    const boundary = /content-type: multipart\/mixed; boundary=(\S+)/i.exec(res.headers)?.[1];
    expect(boundary).toBeDefined();
    const parts = readFileSync(path('keygen.multipart'), 'utf8')
      .split(`--${boundary}`)
      .slice(1, -1)
      .map((part) => part.split('\r\n\r\n')[1]!);
    expect(parts).toHaveLength(2);
    write('key.b64', parts[0]!);
    write('cert.b64', parts[1]!);
    await ok('openssl', ['base64', '-d', '-in', path('key.b64'), '-out', path('key.p7')]);
    await ok('openssl', [
      'cms',
      '-decrypt',
      '-inform',
      'DER',
      '-in',
      path('key.p7'),
      '-inkey',
      path('transport.key'),
      '-out',
      path('server-key.der'),
    ]);
    const certs = await certsOf('cert.b64', 'server-cert.pem');
    expect(certs.match(/-----BEGIN CERTIFICATE-----/g)!.length).toBeGreaterThan(1);
    expect(await publicKeyOf(['pkey', '-inform', 'DER', '-in', path('server-key.der'), '-pubout'])).toBe(
      await publicKeyOf(['x509', '-in', path('server-cert.pem'), '-noout', '-pubkey']),
    );
  });

  it('the mutual-TLS route enrolls a client of its trust bundle and refuses a foreign client certificate', async () => {
    await csr('fleet', 'fleet1.est.interop.test');
    const trusted = await curl('/.well-known/est-mtls/fleet/simpleenroll', 'fleet.p7.b64', [
      '--cert',
      path('client.pem'),
      '--key',
      path('client.key'),
      '--data-binary',
      `@${path('fleet.csr.b64')}`,
    ]);
    expect(trusted.status).toBe(200);
    // A client certificate from a CA the profile does not trust (the EST issuing CA itself).
    const foreign = await curl('/.well-known/est-mtls/fleet/simpleenroll', 'foreign.txt', [
      '--cert',
      path('dev.pem'),
      '--key',
      path('dev.key'),
      '--data-binary',
      `@${path('fleet.csr.b64')}`,
    ]);
    expect(foreign.status).toBe(403);
    const audit = await storage.audit.list({ action: 'est_auth_failed_mtls', page: 1, perPage: 10 });
    expect(audit.total).toBeGreaterThan(0);
  });
});

describe('EST with an independent client (Python standard library)', () => {
  it('enrolls with Basic and re-enrolls with the issued certificate', async () => {
    await csr('py', 'py.est.interop.test');
    const base = `${origin}/.well-known/est`;
    const enrolled = await run('python3', [
      CLIENT,
      'simpleenroll',
      '--url',
      base,
      '--ca',
      path('tls-ca.pem'),
      '--csr',
      path('py.csr.der'),
      '--out',
      path('py.pem'),
      '--user',
      'device',
      '--password',
      PASSWORD,
    ]);
    expect(enrolled.code, enrolled.err).toBe(0);
    await ok('openssl', ['verify', '-CAfile', path('est-chain.pem'), path('py.pem')]);
    await csr('py2', 'py.est.interop.test');
    const renewed = await run('python3', [
      CLIENT,
      'simplereenroll',
      '--url',
      base,
      '--ca',
      path('tls-ca.pem'),
      '--csr',
      path('py2.csr.der'),
      '--out',
      path('py2.pem'),
      '--cert',
      path('py.pem'),
      '--key',
      path('py.key'),
    ]);
    expect(renewed.code, renewed.err).toBe(0);
    expect(await publicKeyOf(['x509', '-in', path('py2.pem'), '-noout', '-pubkey'])).toBe(
      await publicKeyOf(['pkey', '-in', path('py2.key'), '-pubout']),
    );
    const wrong = await run('python3', [
      CLIENT,
      'simpleenroll',
      '--url',
      base,
      '--ca',
      path('tls-ca.pem'),
      '--csr',
      path('py.csr.der'),
      '--out',
      path('py-wrong.pem'),
      '--user',
      'device',
      '--password',
      'wrong',
    ]);
    expect(wrong.code).toBe(2);
    expect(wrong.err).toMatch(/HTTP 401/);
  });
});

/**
 * One TLS 1.3 connection with the test client certificate: reads the RFC 9266 tls-exporter
 * value, puts it in the CSR's challengePassword, and POSTs the CSR on that same connection.
 */
function enrollBound(url: string, exporterOverride?: Buffer): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({
      host: target.hostname,
      port: Number(target.port),
      ca: tls.caPem,
      cert: tls.clientCertPem,
      key: tls.clientKeyPem,
      minVersion: 'TLSv1.3',
      servername: 'localhost',
    });
    socket.once('error', reject);
    socket.once('secureConnect', async () => {
      const binding =
        exporterOverride ?? socket.exportKeyingMaterial(32, TLS_EXPORTER_LABEL, Buffer.alloc(0));
      const keys = await generateKeyPair('ECDSA-P256');
      const csr = createCertificationRequest({
        subject: 'CN=bound.est.interop.test',
        privateKey: keys.privateKey,
        subjectAltNames: [{ type: 'dns', value: 'bound.est.interop.test' }],
        challengePassword: binding.toString('base64'),
      });
      const req = httpRequest(
        { method: 'POST', path: target.pathname, host: 'localhost', createConnection: () => socket },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            socket.destroy();
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() });
          });
        },
      );
      req.on('error', reject);
      req.end(Buffer.from(csr).toString('base64'));
    });
  });
}

describe('createEstHandler in every host, with client certificates and channel binding over real TLS', () => {
  const hostServers: { name: string; origin: string; close: () => Promise<void> }[] = [];

  beforeAll(async () => {
    const est: Handler = createEstHandler({ authority: handler!.servers!.est, mtls: true });
    const listen = async (server: Server) => {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    };
    const close = (server: Server) => () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    };
    const node = createServer(serverTlsOptions(tls), createRequestListener(est));
    hostServers.push({ name: 'node listener', origin: await listen(node), close: close(node) });
    const app = express();
    app.use('/.well-known/est-mtls', certwright(est));
    const viaExpress = createServer(serverTlsOptions(tls), app);
    hostServers.push({ name: 'express', origin: await listen(viaExpress), close: close(viaExpress) });
    const fastify = Fastify({ https: serverTlsOptions(tls) });
    await fastify.register(certwrightPlugin, { handler: est, prefix: '/.well-known/est-mtls' });
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    const address = fastify.server.address() as AddressInfo;
    hostServers.push({
      name: 'fastify',
      origin: `https://127.0.0.1:${address.port}`,
      close: () => fastify.close(),
    });
  });
  afterAll(async () => {
    for (const host of hostServers) await host.close();
  });

  it('enrolls through each host with the client certificate and the tls-exporter binding of that connection', async () => {
    for (const host of hostServers) {
      const bound = await enrollBound(`${host.origin}/.well-known/est-mtls/bound/simpleenroll`);
      expect(bound.status, `${host.name}: ${bound.body}`).toBe(200);
      const wrong = await enrollBound(
        `${host.origin}/.well-known/est-mtls/bound/simpleenroll`,
        Buffer.alloc(32, 1),
      );
      expect(wrong.status, host.name).toBe(403);
      expect(wrong.body, host.name).toMatch(/channel binding failed/);
    }
  });
});
