import { randomBytes } from 'node:crypto';
import { type CertwrightHandler, createHandler } from '@certwright/api';
import {
  createServices,
  type Logger,
  SecretBox,
  type Services,
  SYSTEM_ACTOR,
  silentLogger,
  systemClock,
} from '@certwright/core';
import { buildCertId, der, readCertificate } from '@certwright/core/pki';
import type { createPgliteStorage } from '@certwright/storage-pg';
import { createMigratedPgliteStorage } from '@certwright/storage-pg/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AccessLogSettings, createAccessLog } from '../src/access-log.js';
import {
  type CountingListener,
  listenCountingWebCalls,
  openRaw,
  sendRaw,
} from './support/direct-listener.js';

/**
 * The access log (docs/operations/observability.md, "Access log"): one info line per answer,
 * whichever entry of the server's listener wrote it — node:http and the Web handler, the
 * listener's own direct connections (OCSP over HTTP/1.1), and node:http asking the direct
 * entry (an HTTP/1.0 OCSP request the direct connections hand over). The request id the
 * answer's X-Request-Id carries (what the CLI and client print) is in the line.
 */

const SECRET = 'access-log-test-secret-0123456789abcdef';
let storage: Awaited<ReturnType<typeof createPgliteStorage>>;
let services: Services;
let handler: CertwrightHandler;
let issuerId: string;
let ocspBody: Uint8Array;
const lines: Record<string, unknown>[] = [];

const recording: Logger = {
  debug: () => {},
  info: (fields, message) => {
    if (message === 'access') lines.push(fields as Record<string, unknown>);
  },
  warn: () => {},
  error: () => {},
  child: () => recording,
};

const listeners: CountingListener[] = [];
async function listen(settings: Partial<AccessLogSettings> = {}, random?: () => number) {
  const accessLog = createAccessLog(
    recording,
    { enabled: true, sampleOcsp: 1, sampleCrl: 1, ...settings },
    random,
  );
  const listener = await listenCountingWebCalls(handler, accessLog ? { accessLog } : {});
  listeners.push(listener);
  return listener;
}

const ocspHeaders = { 'content-type': 'application/ocsp-request' };

beforeAll(async () => {
  storage = await createMigratedPgliteStorage({
    secretBox: new SecretBox(randomBytes(32)),
    clock: systemClock,
  });
  services = createServices({ storage, clock: systemClock, logger: silentLogger });
  const issuer = await services.issuers.create(SYSTEM_ACTOR, { name: 'access log CA', type: 'Local' });
  issuerId = issuer.id;
  const [issuingPem] = await services.pki.lifecycle.caChain(issuer.id);
  const certId = buildCertId(readCertificate(issuingPem!), '0badc0de', 'sha1').der;
  ocspBody = new Uint8Array(der.sequence(der.sequence(der.sequence(der.sequence(certId)))));
  handler = createHandler({ auth: { type: 'api-key', secret: SECRET }, services, logger: silentLogger });
}, 180_000);

afterAll(async () => {
  await Promise.all(listeners.map((listener) => listener.close()));
  await storage?.close();
});

beforeEach(() => {
  lines.length = 0;
});

/** The one line whose request id is `id`. */
function lineOf(id: unknown): Record<string, unknown> {
  expect(typeof id).toBe('string');
  const found = lines.filter((line) => line.request_id === id);
  expect(found).toHaveLength(1);
  return found[0]!;
}

describe('the access log on every entry', () => {
  it('node:http and the Web handler: an authenticated REST call, with route template, principal and bytes', async () => {
    const listener = await listen();
    const reply = await sendRaw(listener.port, 'GET', `/api/v1/issuers/${issuerId}`, {
      headers: { authorization: `Bearer ${SECRET}` },
    });
    expect(reply.status).toBe(200);
    expect(listener.webCalls).toBe(1);
    const line = lineOf(reply.headers['x-request-id']);
    expect(line).toMatchObject({
      method: 'GET',
      route: '/api/v1/issuers/{id}',
      status: 200,
      bytes: reply.body.length,
      client: '127.0.0.1',
      principal_kind: 'api-key',
      principal_id: 'api-key',
      protocol: 'HTTP/1.1',
    });
    expect(line.duration_ms).toEqual(expect.any(Number));
    // A raw path never goes in: the id stays in the route template.
    expect(JSON.stringify(line)).not.toContain(issuerId);
  });

  it('a refused request (401) is logged too, without a principal: the id the CLI prints is findable', async () => {
    const listener = await listen();
    const reply = await sendRaw(listener.port, 'GET', '/api/v1/certificates', {
      headers: { authorization: 'Bearer not-the-secret-at-all-0000' },
    });
    expect(reply.status).toBe(401);
    expect(JSON.parse(reply.body.toString()).request_id).toBe(reply.headers['x-request-id']);
    expect(lineOf(reply.headers['x-request-id'])).toMatchObject({
      route: '/api/v1/certificates',
      status: 401,
      principal_kind: null,
      principal_id: null,
    });
    expect(JSON.stringify(lines)).not.toContain('not-the-secret');
  });

  it("the listener's direct connections: an OCSP POST answered without node:http", async () => {
    const listener = await listen();
    const reply = await sendRaw(listener.port, 'POST', `/.well-known/pki/ocsp/${issuerId}`, {
      body: ocspBody,
      headers: { ...ocspHeaders, 'x-request-id': 'ocsp-direct-1' },
    });
    expect(reply.status).toBe(200);
    expect(reply.headers['x-request-id']).toBe('ocsp-direct-1');
    expect(listener.webCalls).toBe(0);
    expect(lineOf('ocsp-direct-1')).toMatchObject({
      method: 'POST',
      route: '/.well-known/pki/ocsp/{issuer_id}',
      status: 200,
      bytes: reply.body.length,
      client: '127.0.0.1',
      principal_kind: null,
      protocol: 'HTTP/1.1',
    });
  });

  it("node:http's direct branch: an HTTP/1.0 OCSP request the direct connections hand over", async () => {
    const listener = await listen();
    const raw = await openRaw(listener.port);
    const head =
      `POST /.well-known/pki/ocsp/${issuerId} HTTP/1.0\r\nHost: 127.0.0.1\r\n` +
      `content-type: application/ocsp-request\r\nx-request-id: ocsp-http10\r\n` +
      `content-length: ${ocspBody.length}\r\n\r\n`;
    raw.write(Buffer.concat([Buffer.from(head, 'latin1'), ocspBody]));
    const reply = await raw.reply();
    raw.destroy();
    expect(reply.status).toBe(200);
    expect(listener.webCalls).toBe(0);
    expect(lineOf('ocsp-http10')).toMatchObject({
      route: '/.well-known/pki/ocsp/{issuer_id}',
      status: 200,
      bytes: reply.body.length,
      protocol: 'HTTP/1.0',
    });
  });

  it('sampling: OCSP and CRL successes at the configured share, failures and other routes always', async () => {
    // A share of 0.5 against a fixed draw: 0.7 is above it (dropped), 0.2 below it (kept).
    let draw = 0.7;
    const listener = await listen({ sampleOcsp: 0.5, sampleCrl: 0 }, () => draw);
    const ocsp = (id: string) =>
      sendRaw(listener.port, 'POST', `/.well-known/pki/ocsp/${issuerId}`, {
        body: ocspBody,
        headers: { ...ocspHeaders, 'x-request-id': id },
      });
    expect((await ocsp('sampled-out')).status).toBe(200);
    draw = 0.2;
    expect((await ocsp('sampled-in')).status).toBe(200);
    const crl = await sendRaw(listener.port, 'GET', `/.well-known/pki/crl/${issuerId}`, {
      headers: { 'x-request-id': 'crl-off' },
    });
    expect(crl.status).toBe(200);
    const missing = await sendRaw(listener.port, 'GET', '/.well-known/pki/crl/no-such-issuer', {
      headers: { 'x-request-id': 'crl-missing' },
    });
    expect(missing.status).toBe(404);
    const version = await sendRaw(listener.port, 'GET', '/api/v1/version', {
      headers: { 'x-request-id': 'version-1' },
    });
    expect(version.status).toBe(200);
    expect(lines.map((line) => line.request_id)).toEqual(['sampled-in', 'crl-missing', 'version-1']);
  });

  it('SVC_ACCESS_LOG=off: no access log at all', async () => {
    expect(createAccessLog(recording, { enabled: false, sampleOcsp: 1, sampleCrl: 1 })).toBeUndefined();
  });
});
