/**
 * Every protocol answer — EST, SCEP, OCSP, CRL, ACME — goes out with a Content-Length and
 * never with the chunked transfer coding, on every host: the server's own TLS listener (its
 * direct path included), Express and Fastify. Widely used EST client libraries read a body only
 * when Content-Length is present. Checked on the wire: the raw bytes of the answer's head, read
 * from a TLS socket.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { SecretBox, type Services, SYSTEM_ACTOR, silentLogger, systemClock } from '@certwright/core';
import { buildCertId, der, readCertificate } from '@certwright/core/pki';
import { certwright } from '@certwright/host-express';
import { certwrightPlugin } from '@certwright/host-fastify';
import { startTlsServer, type TlsServer } from '@certwright/server';
import express from 'express';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CertwrightHandler, createHandler } from '../../packages/api/src/index.js';
import { createServices } from '../../packages/core/src/index.js';
import type { createPgliteStorage } from '../../packages/storage-pg/src/index.js';
import { createMigratedPgliteStorage } from '../../packages/storage-pg/src/testing.js';
import { createTestTls, serverTlsOptions, type TestTls } from './support/tls.js';

type HostName = 'server listener' | 'express' | 'fastify';

let tls: TestTls;
let dir: string;
let storage: Awaited<ReturnType<typeof createPgliteStorage>>;
let services: Services;
let handler: CertwrightHandler;
let issuerId: string;
let ocspRequest: Buffer;
const ports = new Map<HostName, number>();
const closers: (() => Promise<void>)[] = [];

interface WireAnswer {
  status: number;
  /** Header lines as received, names lower-cased. */
  headers: [string, string][];
  body: Buffer;
}

/** One request on its own TLS connection; the whole answer is read until the server closes. */
function onTheWire(
  port: number,
  method: string,
  path: string,
  body?: Uint8Array,
  headers: Record<string, string> = {},
) {
  return new Promise<WireAnswer>((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername: 'localhost', ca: tls.caPem });
    const chunks: Buffer[] = [];
    socket.on('secureConnect', () => {
      let head = `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n`;
      for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
      if (body) head += `Content-Length: ${body.byteLength}\r\n`;
      socket.write(Buffer.concat([Buffer.from(`${head}\r\n`, 'latin1'), body ?? Buffer.alloc(0)]));
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const all = Buffer.concat(chunks);
      const end = all.indexOf('\r\n\r\n');
      if (end < 0) return reject(new Error(`no complete head: ${all.toString('latin1')}`));
      const [statusLine, ...lines] = all.subarray(0, end).toString('latin1').split('\r\n');
      resolve({
        status: Number(statusLine!.split(' ')[1]),
        headers: lines.map((line) => {
          const colon = line.indexOf(':');
          return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
        }),
        body: all.subarray(end + 4),
      });
    });
  });
}

interface Case {
  name: string;
  method: string;
  path: () => string;
  body?: () => Uint8Array;
  headers?: Record<string, string>;
  status: number;
}

const cases: Case[] = [
  { name: 'EST cacerts', method: 'GET', path: () => '/.well-known/est/cacerts', status: 200 },
  {
    name: 'EST csrattrs (none asked for: 204)',
    method: 'GET',
    path: () => '/.well-known/est/csrattrs',
    status: 204,
  },
  {
    name: 'EST simpleenroll without credentials (401, no body)',
    method: 'POST',
    path: () => '/.well-known/est/simpleenroll',
    body: () => Buffer.from('MIIB'),
    headers: { 'content-type': 'application/pkcs10' },
    status: 401,
  },
  { name: 'EST unknown operation', method: 'GET', path: () => '/.well-known/est/nothing', status: 404 },
  { name: 'SCEP GetCACaps', method: 'GET', path: () => '/scep?operation=GetCACaps', status: 200 },
  { name: 'SCEP GetCACert', method: 'GET', path: () => '/scep?operation=GetCACert', status: 200 },
  {
    name: 'SCEP PKIOperation that is no PKIMessage',
    method: 'POST',
    path: () => '/scep?operation=PKIOperation',
    body: () => Buffer.from('not a PKIMessage'),
    headers: { 'content-type': 'application/x-pki-message' },
    status: 400,
  },
  {
    name: 'OCSP POST',
    method: 'POST',
    path: () => `/.well-known/pki/ocsp/${issuerId}`,
    body: () => ocspRequest,
    headers: { 'content-type': 'application/ocsp-request' },
    status: 200,
  },
  {
    name: 'OCSP GET',
    method: 'GET',
    path: () => `/.well-known/pki/ocsp/${issuerId}/${encodeURIComponent(ocspRequest.toString('base64'))}`,
    status: 200,
  },
  {
    name: 'OCSP serial status (JSON)',
    method: 'GET',
    path: () => `/.well-known/pki/ocsp/${issuerId}/serial/0a`,
    status: 200,
  },
  { name: 'CRL', method: 'GET', path: () => `/.well-known/pki/crl/${issuerId}`, status: 200 },
  {
    name: 'CRL of an unknown issuer',
    method: 'GET',
    path: () => '/.well-known/pki/crl/iss-nothing',
    status: 404,
  },
  { name: 'ACME directory', method: 'GET', path: () => '/acme/directory', status: 200 },
  { name: 'ACME new-nonce', method: 'GET', path: () => '/acme/new-nonce', status: 204 },
  {
    name: 'ACME new-account that is no JWS (a problem document)',
    method: 'POST',
    path: () => '/acme/new-account',
    body: () => Buffer.from('{}'),
    headers: { 'content-type': 'application/jose+json' },
    status: 400,
  },
  {
    name: 'ACME POST with another content type (the Web path)',
    method: 'POST',
    path: () => '/acme/new-account',
    body: () => Buffer.from('{}'),
    headers: { 'content-type': 'text/plain' },
    status: 415,
  },
];

beforeAll(async () => {
  tls = createTestTls();
  dir = mkdtempSync(join(tmpdir(), 'cw-length-'));
  storage = await createMigratedPgliteStorage({
    secretBox: new SecretBox(randomBytes(32)),
    clock: systemClock,
  });
  services = createServices({ storage, clock: systemClock, logger: silentLogger });
  const issuer = await services.issuers.create(SYSTEM_ACTOR, { name: 'length CA', type: 'Local' });
  issuerId = issuer.id;
  const [issuingPem] = await services.pki.lifecycle.caChain(issuer.id);
  const certId = buildCertId(readCertificate(issuingPem!), '0a', 'sha1').der;
  ocspRequest = Buffer.from(der.sequence(der.sequence(der.sequence(der.sequence(certId)))));
  await services.profiles.update(SYSTEM_ACTOR, 'prof-default', {
    acme: { enabled: true },
    est: { enabled: true },
    scep: { enabled: true, challenge_password: 'length scep challenge' },
  });
  handler = createHandler({ auth: { type: 'none' }, services });

  writeFileSync(join(dir, 'cert.pem'), tls.serverCertPem);
  writeFileSync(join(dir, 'key.pem'), tls.serverKeyPem);
  const listener: TlsServer = await startTlsServer({
    handler,
    certPath: join(dir, 'cert.pem'),
    keyPath: join(dir, 'key.pem'),
    port: 0,
    host: '127.0.0.1',
    logger: silentLogger,
  });
  ports.set('server listener', listener.port);
  closers.push(() => listener.close(0));

  const app = express();
  app.use(certwright(handler));
  const server: Server = createServer(serverTlsOptions(tls), app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  ports.set('express', (server.address() as AddressInfo).port);
  closers.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );

  const fastify = Fastify({ https: serverTlsOptions(tls) });
  await fastify.register(certwrightPlugin, { handler });
  await fastify.listen({ port: 0, host: '127.0.0.1' });
  ports.set('fastify', (fastify.server.address() as AddressInfo).port);
  closers.push(() => fastify.close());
}, 180_000);

afterAll(async () => {
  for (const close of closers) await close();
  await storage?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('protocol answers carry Content-Length on every host, never chunked', () => {
  for (const host of ['server listener', 'express', 'fastify'] as const) {
    it(`${host}: EST, SCEP, OCSP, CRL and ACME answers, successes and refusals`, async () => {
      const port = ports.get(host)!;
      for (const c of cases) {
        const answer = await onTheWire(port, c.method, c.path(), c.body?.(), c.headers);
        const what = `${host}: ${c.name}`;
        expect({ what, status: answer.status }).toEqual({ what, status: c.status });
        const names = answer.headers.map(([name]) => name);
        expect({ what, chunked: names.includes('transfer-encoding') }).toEqual({ what, chunked: false });
        if (c.status === 204) {
          // RFC 9110 §8.6: a 204 states no length, and has no body to frame.
          expect({ what, length: names.includes('content-length') }).toEqual({ what, length: false });
          expect(answer.body.byteLength).toBe(0);
          continue;
        }
        const lengths = answer.headers.filter(([name]) => name === 'content-length').map(([, v]) => v);
        expect({ what, lengths }).toEqual({ what, lengths: [String(answer.body.byteLength)] });
      }
    });

    it(`${host}: HEAD states the length GET has, without a body`, async () => {
      const port = ports.get(host)!;
      for (const path of [
        `/.well-known/pki/crl/${issuerId}`,
        '/.well-known/est/cacerts',
        '/scep?operation=GetCACaps',
      ]) {
        const get = await onTheWire(port, 'GET', path);
        const head = await onTheWire(port, 'HEAD', path);
        const length = (answer: WireAnswer) =>
          answer.headers.find(([name]) => name === 'content-length')?.[1];
        expect({ path, status: head.status, length: length(head) }).toEqual({
          path,
          status: get.status,
          length: String(get.body.byteLength),
        });
        expect(head.body.byteLength).toBe(0);
        expect(head.headers.some(([name]) => name === 'transfer-encoding')).toBe(false);
      }
    });
  }
});
