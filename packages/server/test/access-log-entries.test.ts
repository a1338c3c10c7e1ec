import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
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
import {
  buildCertId,
  createCertificationRequest,
  der,
  generateKeyPair,
  readCertificate,
} from '@certwright/core/pki';
import type { createPgliteStorage } from '@certwright/storage-pg';
import { createMigratedPgliteStorage } from '@certwright/storage-pg/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AccessLogSettings, createAccessLog } from '../src/access-log.js';
import { createMetrics, type ServerMetrics } from '../src/metrics.js';
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
 *
 * Then the per-instance counters of the same document ("Counters"): the services wired to the
 * server's metrics as start.ts wires them issue, renew, revoke and enroll, a handler answers
 * OCSP, and /metrics' text holds each series with its value. One migrated storage serves both
 * (each costs seconds of CI).
 */

const SECRET = 'access-log-test-secret-0123456789abcdef';
let storage: Awaited<ReturnType<typeof createPgliteStorage>>;
let services: Services;
let handler: CertwrightHandler;
let issuerId: string;
let ocspBody: Uint8Array;
let metrics: ServerMetrics;
const OBSERVABILITY = fileURLToPath(new URL('../../../docs/operations/observability.md', import.meta.url));
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
  metrics = createMetrics();
  services = createServices({
    storage,
    clock: systemClock,
    logger: silentLogger,
    onOutcome: (event) => metrics.outcome(event),
  });
  metrics.registerPki({
    storage,
    clock: systemClock,
    logger: silentLogger,
    cacheMs: 0,
    certificateSeriesLimit: 100,
  });
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

/** `name{labels} value` lines of one series name, as label text → value. */
function series(body: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of body.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const space = line.lastIndexOf(' ');
    out.set(line.slice(name.length, space), Number(line.slice(space + 1)));
  }
  return out;
}

async function csr(names: string[]): Promise<Uint8Array> {
  const { privateKey } = await generateKeyPair('ECDSA-P256');
  return createCertificationRequest({
    subject: names[0] ? [{ type: 'CN', value: names[0] }] : [],
    privateKey,
    subjectAltNames: names.map((value) => ({ type: 'dns' as const, value })),
  });
}

describe('per-instance lifecycle, enrollment and OCSP counters', () => {
  it('counts issuance, renewal, revocation and enrollment by issuer or protocol and outcome', async () => {
    const owner = await services.owners.create(SYSTEM_ACTOR, { name: 'Counter', email: 'c@example.test' });
    const team = await services.teams.create(SYSTEM_ACTOR, { name: 'Counters' });
    const created = await services.certificates.create(SYSTEM_ACTOR, {
      name: 'counted',
      common_name: 'counted.example.test',
      renewal_policy_id: 'rp-default',
      profile_id: 'prof-default',
      issuer_id: issuerId,
      owner_id: owner.id,
      team_id: team.id,
    });
    await services.pki.lifecycle.issue(SYSTEM_ACTOR, created.id);
    expect((await services.certificates.get(created.id)).status).toBe('Active');
    await services.pki.lifecycle.renew(SYSTEM_ACTOR, created.id);
    await services.certificates.revoke(SYSTEM_ACTOR, created.id, 'keyCompromise');
    // Revoking it again is refused: a failure, counted against its issuer.
    await expect(services.certificates.revoke(SYSTEM_ACTOR, created.id, 'keyCompromise')).rejects.toThrow(
      /already revoked/,
    );
    await services.pki.enrollment.enroll(SYSTEM_ACTOR, {
      profileId: 'prof-default',
      csrDer: await csr(['enrolled.example.test']),
      source: 'EST',
    });
    // A CSR that names nothing is refused by the enrollment path: an ACME failure.
    await expect(
      services.pki.enrollment.enroll(SYSTEM_ACTOR, {
        profileId: 'prof-default',
        csrDer: await csr([]),
        source: 'ACME',
      }),
    ).rejects.toThrow();

    const { body } = await metrics.render();
    const issuer = `issuer="${issuerId}"`;
    expect(series(body, 'certwright_certificate_issuances_total')).toEqual(
      new Map([[`{${issuer},outcome="success"}`, 1]]),
    );
    expect(series(body, 'certwright_certificate_renewals_total')).toEqual(
      new Map([[`{${issuer},outcome="success"}`, 1]]),
    );
    expect(series(body, 'certwright_certificate_revocations_total')).toEqual(
      new Map([
        [`{${issuer},outcome="success"}`, 1],
        [`{${issuer},outcome="failure"}`, 1],
      ]),
    );
    const enrollments = series(body, 'certwright_enrollments_total');
    expect(enrollments.get('{protocol="est",outcome="success"}')).toBe(1);
    expect(enrollments.get('{protocol="acme",outcome="failure"}')).toBe(1);
    // Every protocol and outcome is there from the start, at 0 until something happens.
    expect(enrollments.get('{protocol="scep",outcome="success"}')).toBe(0);
    expect(enrollments.size).toBe(6);
  });

  it('counts OCSP answers by RFC 6960 responseStatus with a latency histogram', async () => {
    const handler = createHandler({
      auth: { type: 'none' },
      services,
      logger: silentLogger,
      onResponse: (event) => metrics.observe(event),
    });
    const [issuingPem] = await services.pki.lifecycle.caChain(issuerId);
    const certId = buildCertId(readCertificate(issuingPem!), '0badc0de', 'sha1').der;
    const request = new Uint8Array(der.sequence(der.sequence(der.sequence(der.sequence(certId)))));
    const ocsp = (body: Uint8Array, issuer = issuerId) =>
      handler(
        new Request(`https://127.0.0.1/.well-known/pki/ocsp/${issuer}`, {
          method: 'POST',
          headers: { 'content-type': 'application/ocsp-request' },
          body: new Uint8Array(body),
        }),
        { remoteAddress: '127.0.0.1' },
      );
    expect((await ocsp(request)).status).toBe(200);
    expect((await ocsp(request)).status).toBe(200);
    expect((await ocsp(new Uint8Array([1, 2, 3]))).status).toBe(400);
    expect((await ocsp(request, 'no-such-issuer')).status).toBe(404);
    const { body } = await metrics.render();
    expect(series(body, 'certwright_ocsp_responses_total')).toEqual(
      new Map([
        ['{status="successful"}', 2],
        ['{status="malformedRequest"}', 1],
        ['{status="unauthorized"}', 1],
        ['{status="tryLater"}', 0],
        ['{status="internalError"}', 0],
      ]),
    );
    expect(series(body, 'certwright_ocsp_response_duration_seconds_count').get('')).toBe(4);
  });

  it("names every series /metrics exports in the docs' metrics table", async () => {
    const { body } = await metrics.render();
    const exported = [...body.matchAll(/^# TYPE ((?:certwright|svc)_\S+) /gm)].map((m) => m[1]!);
    expect(exported).toContain('certwright_enrollments_total');
    const table = readFileSync(OBSERVABILITY, 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .join('\n');
    expect(exported.filter((name) => !table.includes(`| \`${name}\` |`))).toEqual([]);
  });
});
