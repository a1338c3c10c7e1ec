import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createHandler } from '@certwright/api';
import {
  createServices,
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
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics, type ServerMetrics } from '../src/metrics.js';

/**
 * The per-instance counters of docs/operations/observability.md ("Counters"): services wired
 * to the server's metrics as start.ts wires them issue, renew, revoke and enroll, the handler
 * answers OCSP, and /metrics' text holds each series with the value that follows.
 */

const OBSERVABILITY = fileURLToPath(new URL('../../../docs/operations/observability.md', import.meta.url));
let storage: Awaited<ReturnType<typeof createPgliteStorage>>;
let services: Services;
let metrics: ServerMetrics;
let issuerId: string;

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
  issuerId = (await services.issuers.create(SYSTEM_ACTOR, { name: 'Counting CA', type: 'Local' })).id;
}, 180_000);

afterAll(async () => {
  await storage?.close();
});

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
