import type { Principal } from '@certwright/api';
import { permissionsOf, type RevocationEvent } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createCertificate, type References, seedReferences } from './support/inventory-fixtures.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const OPERATOR: Principal = { kind: 'session', id: 'operator', permissions: permissionsOf(['operator']) };
// A principal whose context carries no permissions at all.
const FLAGLESS = { kind: 'session', id: 'flagless' } as unknown as Principal;

let app: TestApp;
let refs: References;
const revocations: RevocationEvent[] = [];

beforeAll(async () => {
  app = await createTestApp({
    services: { revocationListeners: [(event) => void revocations.push(event)] },
    handler: {
      authenticators: [
        async (token) => (token === 'operator' ? OPERATOR : token === 'flagless' ? FLAGLESS : null),
      ],
    },
  });
  refs = await seedReferences(app);
});
afterAll(() => app.close());

async function auditCount(action: string) {
  return (await app.storage.audit.list({ action, perPage: 1 })).total;
}

/** A fresh owner with `n` certificates, inserted directly for speed. */
async function ownerWith(n: number, overrides: Record<string, unknown> = {}) {
  const owner = (await app.call('POST', '/api/v1/owners', { name: 'bulk owner' })).body.id as string;
  const ids: string[] = [];
  await app.storage.transaction(async (tx) => {
    for (let i = 0; i < n; i += 1) {
      const c = await tx.certificates.create({
        name: `bulk-${i}`,
        common_name: `bulk-${i}.example.com`,
        renewal_policy_id: refs.policy,
        issuer_id: refs.issuer,
        owner_id: owner,
        team_id: refs.team,
        status: 'Active',
        ...overrides,
      });
      ids.push(c.id);
    }
  });
  return { owner, ids };
}

describe('bulk criteria', () => {
  it('answers 400 for empty criteria on revoke and renew', async () => {
    for (const path of ['bulk-revoke', 'bulk-renew']) {
      for (const body of [{}, { certificate_ids: [] }, { source: '' }, { reason: 'superseded' }]) {
        const res = await app.call('POST', `/api/v1/certificates/${path}`, body);
        expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(400);
        expect(res.body.errors[0].field).toBe('criteria');
      }
    }
  });

  it('rejects criteria holding only source as too broad', async () => {
    for (const path of ['bulk-revoke', 'bulk-renew']) {
      const res = await app.call('POST', `/api/v1/certificates/${path}`, { source: 'API' });
      expect(res.status).toBe(400);
      expect(res.body.detail).toContain('too broad');
      expect(res.body.errors[0].field).toBe('source');
    }
  });

  it('rejects an invalid revocation reason naming the field', async () => {
    const res = await app.call('POST', '/api/v1/certificates/bulk-revoke', {
      owner_id: refs.owner,
      reason: 'KeyCompromise',
    });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe('reason');
  });

  it('answers 405 with Allow for other methods, never reaching /certificates/{id}', async () => {
    for (const path of ['bulk-revoke', 'bulk-renew', 'bulk-reassign']) {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const res = await app.call(method, `/api/v1/certificates/${path}`);
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(res.headers.get('allow')).toBe('POST');
      }
    }
    expect((await app.call('GET', '/api/v1/est/certificates/bulk-revoke')).status).toBe(405);
  });
});

describe('bulk revoke', () => {
  it('revokes every selected certificate and version across batches with one audit event', async () => {
    const { owner, ids } = await ownerWith(1201);
    await app.storage.versions.create({
      certificate_id: ids[0] as string,
      issuer_id: refs.issuer,
      serial_number: 'b0001',
      fingerprint_sha256: 'b'.repeat(64),
      key_algorithm: 'RSA',
      key_size: 2048,
      subject: 'CN=bulk-0.example.com',
      issued_at: app.clock.now(),
      not_before: app.clock.now(),
      not_after: new Date('2026-06-01T00:00:00Z'),
      csr_pem: null,
      cert_pem: 'pem',
      chain_pem: '',
    });
    const before = await auditCount('certificates_bulk_revoked');
    revocations.length = 0;
    const res = await app.call('POST', '/api/v1/certificates/bulk-revoke', {
      owner_id: owner,
      reason: 'cessationOfOperation',
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      total_matched: 1201,
      total_revoked: 1201,
      total_skipped: 0,
      total_failed: 0,
      errors: [],
    });
    // List totals above 1,000 are estimates (docs/api/inventory.md); count exactly here.
    expect(await app.storage.certificates.count({ owner_id: owner, status: 'Revoked' })).toEqual({
      total: 1201,
      estimated: false,
    });
    const version = await app.storage.versions.latest(ids[0] as string);
    expect(version).toMatchObject({ revocation_reason: 'cessationOfOperation', revoked_at: app.clock.now() });
    expect(await auditCount('certificates_bulk_revoked')).toBe(before + 1);
    expect(revocations).toEqual([
      {
        issuer_ids: [refs.issuer],
        revoked: 1201,
        reason: 'cessationOfOperation',
        certificate_ids: expect.arrayContaining(ids),
      },
    ]);
    expect(revocations[0]!.certificate_ids).toHaveLength(1201);
    // A second call finds them all revoked: skipped, nothing new, still one event per call.
    const again = await app.call('POST', '/api/v1/certificates/bulk-revoke', { owner_id: owner });
    expect(again.body).toMatchObject({ total_matched: 1201, total_revoked: 0, total_skipped: 1201 });
    expect(await auditCount('certificates_bulk_revoked')).toBe(before + 2);
  });

  it('combines criteria with AND and reports unknown ids per certificate', async () => {
    const a = await createCertificate(app, refs, { name: 'and-a', source: 'API' });
    const b = await createCertificate(app, refs, { name: 'and-b', source: 'SCEP' });
    const res = await app.call('POST', '/api/v1/certificates/bulk-revoke', {
      certificate_ids: [a.id, b.id, 'mc-ghost'],
      source: 'API',
    });
    expect(res.body).toEqual({
      total_matched: 1,
      total_revoked: 1,
      total_skipped: 0,
      total_failed: 1,
      errors: [
        { certificate_id: 'mc-ghost', error: 'not_found', message: "certificate 'mc-ghost' does not exist" },
      ],
    });
    expect((await app.call('GET', `/api/v1/certificates/${b.id}`)).body.status).toBe('Pending');
    // An empty source means "any source".
    const any = await app.call('POST', '/api/v1/certificates/bulk-revoke', {
      certificate_ids: [b.id],
      source: '',
    });
    expect(any.body.total_revoked).toBe(1);
  });
});

describe('revocation listeners', () => {
  it('runs listeners registered later, and a failing one neither fails the call nor stops the others', async () => {
    const seen: string[][] = [];
    const offFailing = app.services.revocation.onRevoked(() => {
      throw new Error('CRL refresh down');
    });
    const offRecording = app.services.revocation.onRevoked((event) => void seen.push(event.issuer_ids));
    try {
      const cert = await createCertificate(app, refs, { name: 'listener' });
      const res = await app.call('POST', `/api/v1/certificates/${cert.id}/revoke`, { reason: 'superseded' });
      expect(res.status).toBe(200);
      expect(seen).toEqual([[refs.issuer]]);
    } finally {
      offFailing();
      offRecording();
    }
    // Nothing is told about a call that revoked nothing.
    seen.length = 0;
    await app.call('POST', '/api/v1/certificates/bulk-revoke', { certificate_ids: ['mc-none'] });
    expect(seen).toEqual([]);
  });
});

describe('EST bulk revoke', () => {
  it('forces source EST and audits est_bulk_revoke', async () => {
    const { owner } = await ownerWith(0);
    const est = await createCertificate(app, refs, { owner_id: owner, source: 'EST' });
    const api = await createCertificate(app, refs, { owner_id: owner, source: 'API' });
    const before = await auditCount('est_bulk_revoke');
    const res = await app.call('POST', '/api/v1/est/certificates/bulk-revoke', {
      owner_id: owner,
      source: 'API',
    });
    expect(res.status).toBe(200);
    expect(res.body.total_revoked).toBe(1);
    expect((await app.call('GET', `/api/v1/certificates/${est.id}`)).body.status).toBe('Revoked');
    expect((await app.call('GET', `/api/v1/certificates/${api.id}`)).body.status).toBe('Pending');
    expect(await auditCount('est_bulk_revoke')).toBe(before + 1);
  });

  it('answers 403 without calling the service when the principal is not admin', async () => {
    const spy = vi.spyOn(app.services.bulk, 'revoke');
    try {
      for (const token of ['operator', 'flagless']) {
        const res = await app.call(
          'POST',
          '/api/v1/est/certificates/bulk-revoke',
          { owner_id: refs.owner },
          { token },
        );
        expect(res.status, token).toBe(403);
        expect(res.body.error).toBe('forbidden');
      }
      expect(spy).not.toHaveBeenCalled();
      // Bulk renew and reassign are not admin-gated (spec §4.3); every revocation is.
      const { owner, ids } = await ownerWith(1);
      const opts = { token: 'operator' };
      expect(
        (await app.call('POST', '/api/v1/certificates/bulk-renew', { owner_id: owner }, opts)).status,
      ).toBe(200);
      const reassign = await app.call(
        'POST',
        '/api/v1/certificates/bulk-reassign',
        { certificate_ids: ids, owner_id: refs.owner },
        opts,
      );
      expect(reassign.status).toBe(200);
      expect(
        (await app.call('POST', '/api/v1/certificates/bulk-revoke', { certificate_ids: ids }, opts)).status,
      ).toBe(403);
      expect(spy).not.toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
  });
});

describe('bulk renew', () => {
  it('skips Archived, Revoked, Expired and RenewalInProgress and enqueues one job per renewed certificate', async () => {
    const { owner, ids } = await ownerWith(6);
    const statuses = ['Archived', 'Revoked', 'Expired', 'RenewalInProgress', 'Active', 'Failed'] as const;
    for (const [i, status] of statuses.entries())
      await app.storage.certificates.update(ids[i] as string, { status });
    await app.storage.certificates.update(ids[4] as string, { profile_id: refs.agentProfile });
    await app.storage.certificates.update(ids[5] as string, { profile_id: refs.profile });
    const before = await auditCount('certificates_bulk_renewed');
    const res = await app.call('POST', '/api/v1/certificates/bulk-renew', { owner_id: owner });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      total_matched: 6,
      total_renewed: 2,
      total_skipped: 4,
      total_failed: 0,
      errors: [],
    });
    const jobs = res.body.enqueued_jobs as { certificate_id: string; job_id: string }[];
    expect(jobs.map((j) => j.certificate_id).sort()).toEqual([ids[4], ids[5]].sort());
    const firstStatus = async (certificateId: string) =>
      (await app.storage.jobs.get(jobs.find((j) => j.certificate_id === certificateId)?.job_id as string))
        ?.status;
    expect(await firstStatus(ids[4] as string)).toBe('AwaitingCSR');
    expect(await firstStatus(ids[5] as string)).toBe('Pending');
    expect((await app.storage.jobs.get(jobs[0]?.job_id as string))?.type).toBe('Renewal');
    for (const [i, status] of statuses.entries()) {
      const now = (await app.call('GET', `/api/v1/certificates/${ids[i]}`)).body.status;
      expect(now).toBe(i >= 4 ? 'RenewalInProgress' : status);
    }
    expect(await auditCount('certificates_bulk_renewed')).toBe(before + 1);
  });

  it('renews an explicit id list and reports unknown ids', async () => {
    const { ids } = await ownerWith(2);
    const res = await app.call('POST', '/api/v1/certificates/bulk-renew', {
      certificate_ids: [...ids, 'mc-nope'],
    });
    expect(res.body).toMatchObject({ total_renewed: 2, total_failed: 1 });
    expect(res.body.errors).toEqual([
      { certificate_id: 'mc-nope', error: 'not_found', message: "certificate 'mc-nope' does not exist" },
    ]);
    expect(res.body.enqueued_jobs).toHaveLength(2);
  });
});

describe('agent criterion', () => {
  it('selects the certificates bound to a target of the agent, in lists and bulk calls', async () => {
    const agent = await app.storage.agents.create({
      name: 'edge-1',
      hostname: 'edge-1.internal',
      os: 'linux',
      architecture: 'amd64',
      ip_address: '10.0.0.1',
      version: '2.0.0',
      api_key_hash: null,
    });
    const target = await app.storage.targets.create({ agent_id: agent.id, name: 'nginx', type: 'NGINX' });
    const { ids } = await ownerWith(3);
    await app.storage.certificates.setTargets(ids[0] as string, [target.id]);
    await app.storage.certificates.setTargets(ids[1] as string, [target.id]);
    const listed = await app.call('GET', `/api/v1/certificates?agent_id=${agent.id}&sort=name`);
    expect(listed.body.data.map((c: { id: string }) => c.id).sort()).toEqual([ids[0], ids[1]].sort());
    const renewed = await app.call('POST', '/api/v1/certificates/bulk-renew', { agent_id: agent.id });
    expect(renewed.body).toMatchObject({ total_matched: 2, total_renewed: 2 });
    expect((await app.call('GET', `/api/v1/certificates/${ids[2]}`)).body.status).toBe('Active');
  });
});

describe('bulk reassign', () => {
  it('answers 400 for a missing owner or team before touching any certificate', async () => {
    const { owner, ids } = await ownerWith(3);
    const before = await auditCount('certificates_bulk_reassigned');
    const noOwner = await app.call('POST', '/api/v1/certificates/bulk-reassign', {
      certificate_ids: ids,
      owner_id: 'own-ghost',
    });
    expect(noOwner.status).toBe(400);
    expect(noOwner.body.errors).toEqual([{ field: 'owner_id', message: "owner 'own-ghost' does not exist" }]);
    const noTeam = await app.call('POST', '/api/v1/certificates/bulk-reassign', {
      certificate_ids: ids,
      owner_id: refs.owner,
      team_id: 'team-ghost',
    });
    expect(noTeam.body.errors).toEqual([{ field: 'team_id', message: "team 'team-ghost' does not exist" }]);
    expect((await app.call('GET', `/api/v1/certificates?owner_id=${owner}`)).body.total).toBe(3);
    expect(await auditCount('certificates_bulk_reassigned')).toBe(before);
    for (const body of [
      { owner_id: refs.owner },
      { certificate_ids: [], owner_id: refs.owner },
      { certificate_ids: ids },
    ]) {
      expect((await app.call('POST', '/api/v1/certificates/bulk-reassign', body)).status).toBe(400);
    }
  });

  it('moves certificates to the new owner and team with one audit event', async () => {
    const { ids } = await ownerWith(3);
    const newOwner = (await app.call('POST', '/api/v1/owners', { name: 'Carol' })).body.id;
    const newTeam = (await app.call('POST', '/api/v1/teams', { name: 'Reassigned team' })).body.id;
    const before = await auditCount('certificates_bulk_reassigned');
    const res = await app.call('POST', '/api/v1/certificates/bulk-reassign', {
      certificate_ids: [...ids, ids[0], 'mc-missing'],
      owner_id: newOwner,
      team_id: newTeam,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      total_requested: 4,
      total_reassigned: 3,
      total_failed: 1,
      errors: [
        {
          certificate_id: 'mc-missing',
          error: 'not_found',
          message: "certificate 'mc-missing' does not exist",
        },
      ],
    });
    const moved = await app.call('GET', `/api/v1/certificates?owner_id=${newOwner}&team_id=${newTeam}`);
    expect(moved.body.total).toBe(3);
    expect(await auditCount('certificates_bulk_reassigned')).toBe(before + 1);
  });
});
