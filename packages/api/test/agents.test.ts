import { createHash } from 'node:crypto';
import { SENTINEL_AGENT_IDS } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_KEY,
  agentCsrPem,
  createOpsApp,
  createTarget,
  type OpsApp,
  registerAgent,
  seedCertificate,
} from './ops-support.js';

let app: OpsApp;
beforeAll(async () => {
  app = await createOpsApp();
}, 60_000);
afterAll(() => app?.close());

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('agent registration and key secrecy', { timeout: 30_000 }, () => {
  it('returns a one-time cwa_ key once; no response ever carries the key or its hash', async () => {
    const agent = await registerAgent(app, 'secret-keeper');
    expect(agent.key).toMatch(/^cwa_[A-Za-z0-9_-]{43}$/);
    expect(agent.id).toMatch(/^ag-/);
    expect(agent.body).toMatchObject({
      name: 'secret-keeper',
      os: 'linux',
      architecture: 'amd64',
      status: 'Offline',
    });
    expect(Object.keys(agent.body)).not.toContain('api_key_hash');
    const hash = sha256(agent.key);
    expect(agent.text).not.toContain(hash);

    // Retire one agent so the retired list has something to leak.
    const retiree = await registerAgent(app, 'retiree');
    expect((await app.call('DELETE', `/api/v1/agents/${retiree.id}`)).status).toBe(200);

    const bodies = [
      await (await app.call('GET', '/api/v1/agents?per_page=500')).text(),
      await (await app.call('GET', `/api/v1/agents/${agent.id}`)).text(),
      await (await app.call('GET', '/api/v1/agents/retired')).text(),
      await (await app.call('POST', `/api/v1/agents/${agent.id}/heartbeat`, { key: agent.key })).text(),
      await (await app.call('GET', `/api/v1/agents/${retiree.id}`)).text(),
    ];
    for (const body of bodies) {
      expect(body).not.toContain(agent.key);
      expect(body).not.toContain(hash);
      expect(body).not.toContain(sha256(retiree.key));
      expect(body).not.toContain(retiree.key);
      expect(body).not.toMatch(/api_key/);
    }
    // The stored value is the hash, found by the hash.
    const found = await app.services.deps.storage.agents.getByApiKeyHash(hash);
    expect(found?.id).toBe(agent.id);
  });

  it('rejects a registration without name or hostname, naming the field', async () => {
    const res = await app.call('POST', '/api/v1/agents', { body: { name: 'x' } });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.errors).toEqual([{ field: 'hostname', message: 'is required' }]);
  });

  it('audits the registration as an auth event', async () => {
    const agent = await registerAgent(app, 'audited');
    const page = await app.services.deps.storage.audit.list({
      action: 'agent_registered',
      resource_id: agent.id,
    });
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({ actor: 'api-key', actor_type: 'api_key', category: 'auth' });
  });
});

describe('agent keys on agent routes', { timeout: 30_000 }, () => {
  it('answers a missing or forged key with the same bare 401', async () => {
    const agent = await registerAgent(app, 'auth-target');
    const forged = `cwa_${'A'.repeat(43)}`;
    const details = new Set<string>();
    for (const key of [null, forged, 'not-a-key', `${agent.key}x`]) {
      const res = await app.call('POST', `/api/v1/agents/${agent.id}/heartbeat`, { key });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      const body = await res.json();
      details.add(body.detail);
      expect(JSON.stringify(body)).not.toContain(agent.id);
    }
    expect(details.size).toBe(1);
  });

  it("refuses another agent's key and the admin key with 403", async () => {
    const a = await registerAgent(app, 'agent-a');
    const b = await registerAgent(app, 'agent-b');
    expect((await app.call('POST', `/api/v1/agents/${a.id}/heartbeat`, { key: b.key })).status).toBe(403);
    expect((await app.call('POST', `/api/v1/agents/${a.id}/work`, { key: b.key })).status).toBe(403);
    expect((await app.call('POST', `/api/v1/agents/${a.id}/heartbeat`, { key: ADMIN_KEY })).status).toBe(403);
    const agentRecord = await (await app.call('GET', `/api/v1/agents/${a.id}`)).json();
    expect(agentRecord.last_heartbeat_at).toBeNull();
  });

  it('confines an agent key to agent routes', async () => {
    const a = await registerAgent(app, 'confined');
    for (const [method, path] of [
      ['GET', '/api/v1/agents'],
      ['GET', `/api/v1/agents/${a.id}`],
      ['GET', '/api/v1/jobs'],
      ['GET', '/api/v1/notifications'],
      ['DELETE', `/api/v1/agents/${a.id}`],
      ['GET', '/api/v1/audit/export'],
    ] as const) {
      expect((await app.call(method, path, { key: a.key })).status, `${method} ${path}`).toBe(403);
    }
  });

  it('still identifies the agent by its key when SVC_AUTH_TYPE=none', async () => {
    const open = await createOpsApp({ authType: 'none' });
    try {
      const a = await registerAgent(open, 'open-a');
      const b = await registerAgent(open, 'open-b');
      expect((await open.call('POST', `/api/v1/agents/${a.id}/heartbeat`, { key: null })).status).toBe(401);
      expect(
        (await open.call('POST', `/api/v1/agents/${a.id}/heartbeat`, { key: 'cwa_forged' })).status,
      ).toBe(401);
      expect((await open.call('POST', `/api/v1/agents/${a.id}/heartbeat`, { key: b.key })).status).toBe(403);
      expect((await open.call('POST', `/api/v1/agents/${a.id}/heartbeat`, { key: a.key })).status).toBe(200);
    } finally {
      await open.close();
    }
  }, 60_000);
});

describe('heartbeat and status', { timeout: 30_000 }, () => {
  it('records the time and reported facts; status follows heartbeat age and failures', async () => {
    const agent = await registerAgent(app, 'pulse');
    const started = app.clock.now();
    const res = await app.call('POST', `/api/v1/agents/${agent.id}/heartbeat`, {
      key: agent.key,
      body: { version: '2.1.0', ip_address: '10.0.0.9', os: 'linux' },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      status: 'Online',
      version: '2.1.0',
      ip_address: '10.0.0.9',
      last_heartbeat_at: started.toISOString(),
    });
    const status = async () => (await (await app.call('GET', `/api/v1/agents/${agent.id}`)).json()).status;

    app.clock.advance(2 * 60_000); // exactly the degraded threshold: still Online
    expect(await status()).toBe('Online');
    app.clock.advance(1);
    expect(await status()).toBe('Degraded');
    app.clock.advance(8 * 60_000); // past 10 minutes
    expect(await status()).toBe('Offline');

    const failing = await app.call('POST', `/api/v1/agents/${agent.id}/heartbeat`, {
      key: agent.key,
      body: { failures: ['nginx: reload failed'] },
    });
    expect((await failing.json()).status).toBe('Degraded');
    await app.call('POST', `/api/v1/agents/${agent.id}/heartbeat`, { key: agent.key, body: {} });
    expect(await status()).toBe('Online');
  });

  it('answers 410 to a retired agent and records nothing', async () => {
    const agent = await registerAgent(app, 'gone');
    await app.call('POST', `/api/v1/agents/${agent.id}/heartbeat`, { key: agent.key });
    const before = await (await app.call('GET', `/api/v1/agents/${agent.id}`)).json();
    expect((await app.call('DELETE', `/api/v1/agents/${agent.id}`)).status).toBe(200);
    app.clock.advance(60_000);
    const res = await app.call('POST', `/api/v1/agents/${agent.id}/heartbeat`, {
      key: agent.key,
      body: { version: '9' },
    });
    expect(res.status).toBe(410);
    const after = await (await app.call('GET', `/api/v1/agents/${agent.id}`)).json();
    expect(after.last_heartbeat_at).toBe(before.last_heartbeat_at);
    expect(after.version).toBe(before.version);
    expect((await app.call('POST', `/api/v1/agents/${agent.id}/work`, { key: agent.key })).status).toBe(410);
  });
});

describe('agent listing', { timeout: 30_000 }, () => {
  it('lists active agents in the envelope and retired ones only under /retired', async () => {
    const active = await registerAgent(app, 'lister');
    const retired = await registerAgent(app, 'lister-retired');
    await app.call('DELETE', `/api/v1/agents/${retired.id}?reason=decommissioned`);
    const list = await (await app.call('GET', '/api/v1/agents?per_page=500')).json();
    expect(Object.keys(list).sort()).toEqual(['data', 'page', 'per_page', 'total']);
    const ids = list.data.map((a: { id: string }) => a.id);
    expect(ids).toContain(active.id);
    expect(ids).not.toContain(retired.id);
    expect(ids).toEqual(expect.arrayContaining([...SENTINEL_AGENT_IDS]));
    // The server's own agents say so; a registered one does not (the console offers no Retire for them).
    const builtIn = (id: string) => list.data.find((a: { id: string }) => a.id === id).built_in;
    for (const id of SENTINEL_AGENT_IDS) expect(builtIn(id)).toBe(true);
    expect(builtIn(active.id)).toBe(false);
    expect((await (await app.call('GET', `/api/v1/agents/${active.id}`)).json()).built_in).toBe(false);

    const retiredList = await (await app.call('GET', '/api/v1/agents/retired')).json();
    const entry = retiredList.data.find((a: { id: string }) => a.id === retired.id);
    expect(entry).toMatchObject({ retired_reason: 'decommissioned' });
    expect(retiredList.data.every((a: { retired_at: string | null }) => a.retired_at !== null)).toBe(true);
  });

  it('clamps the retired list: page < 1 → 1, per_page < 1 → 50', async () => {
    for (const query of ['page=0&per_page=0', 'page=-3&per_page=-1']) {
      const res = await app.call('GET', `/api/v1/agents/retired?${query}`);
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.page).toBe(1);
      expect(body.per_page).toBe(50);
    }
    const second = await (await app.call('GET', '/api/v1/agents/retired?page=2&per_page=1')).json();
    expect(second).toMatchObject({ page: 2, per_page: 1 });
    expect(second.data).toHaveLength(1);
  });

  it('matches /agents/retired before /agents/{id}', async () => {
    const res = await app.call('GET', '/api/v1/agents/retired');
    expect(res.status).toBe(200);
    expect((await res.json()).data).toBeInstanceOf(Array);
    expect((await app.call('GET', '/api/v1/agents/ag-unknown')).status).toBe(404);
  });
});

describe('retirement (spec §3.2, §7)', { timeout: 30_000 }, () => {
  it('refuses force without a reason (400), sentinels even with force (403), unknown ids (404)', async () => {
    const agent = await registerAgent(app, 'retire-rules');
    const noReason = await app.call('DELETE', `/api/v1/agents/${agent.id}?force=true`);
    expect(noReason.status).toBe(400);
    expect((await noReason.json()).errors).toEqual([
      { field: 'reason', message: 'is required when force is true' },
    ]);
    expect((await app.call('DELETE', `/api/v1/agents/${agent.id}?force=true&reason=%20%20`)).status).toBe(
      400,
    );
    for (const id of SENTINEL_AGENT_IDS) {
      expect((await app.call('DELETE', `/api/v1/agents/${id}?force=true&reason=cleanup`)).status).toBe(403);
      expect((await app.call('DELETE', `/api/v1/agents/${id}`)).status).toBe(403);
    }
    expect((await app.call('DELETE', '/api/v1/agents/ag-does-not-exist')).status).toBe(404);
    expect((await app.call('GET', `/api/v1/agents/${agent.id}`)).status).toBe(200);
    expect((await (await app.call('GET', `/api/v1/agents/${agent.id}`)).json()).retired_at).toBeNull();
  });

  it('checks the agent before the force/reason rule, whatever the query', async () => {
    const queries = ['', '?force=true', '?force=true&reason=', '?force=true&reason=%20', '?force=false'];
    for (const query of queries) {
      // A sentinel is 403 and an unknown id 404, never the 400 of force without a reason.
      for (const id of SENTINEL_AGENT_IDS) {
        const res = await app.call('DELETE', `/api/v1/agents/${id}${query}`);
        expect(res.status, `${id}${query}`).toBe(403);
      }
      const unknown = await app.call('DELETE', `/api/v1/agents/ag-never-registered${query}`);
      expect(unknown.status, query).toBe(404);
      expect((await unknown.json()).error).toBe('not_found');
    }
    // Already retired: 204 and nothing recorded, even with force and no reason.
    const agent = await registerAgent(app, 'retired-twice');
    expect((await app.call('DELETE', `/api/v1/agents/${agent.id}?reason=done`)).status).toBe(200);
    const events = async () => (await app.services.deps.storage.audit.list({ resource_id: agent.id })).total;
    const recorded = await events();
    for (const query of queries) {
      const again = await app.call('DELETE', `/api/v1/agents/${agent.id}${query}`);
      expect(again.status, query).toBe(204);
    }
    expect(await events()).toBe(recorded);
    expect((await (await app.call('GET', `/api/v1/agents/${agent.id}`)).json()).retired_reason).toBe('done');
  });

  it('answers 409 with the dependency counts as top-level members when not forced', async () => {
    const agent = await registerAgent(app, 'busy');
    const t1 = await createTarget(app, agent.id);
    const t2 = await createTarget(app, agent.id, { name: 'second', type: 'Apache' });
    await seedCertificate(app, [t1.id, t2.id]);
    await app.call('POST', `/api/v1/targets/${t1.id}/test`);
    const res = await app.call('DELETE', `/api/v1/agents/${agent.id}?reason=no+force`);
    expect(res.status).toBe(409);
    const body = await res.json();
    expect(body).toMatchObject({
      error: 'conflict',
      active_targets: 2,
      active_certificates: 1,
      pending_jobs: 1,
    });
    const after = await (await app.call('GET', `/api/v1/agents/${agent.id}`)).json();
    expect(after.retired_at).toBeNull();
  });

  it('retires with force: targets share the timestamp, both audit events, second DELETE 204', async () => {
    const agent = await registerAgent(app, 'forced');
    const target = await createTarget(app, agent.id);
    const test = await (await app.call('POST', `/api/v1/targets/${target.id}/test`)).json();
    const res = await app.call('DELETE', `/api/v1/agents/${agent.id}?force=true&reason=host+decommissioned`);
    expect(res.status).toBe(200);
    const retired = await res.json();
    expect(retired.retired_at).toBe(app.clock.now().toISOString());
    expect(retired.retired_reason).toBe('host decommissioned');
    const targetAfter = await (await app.call('GET', `/api/v1/targets/${target.id}`)).json();
    expect(targetAfter.retired_at).toBe(retired.retired_at);
    expect(targetAfter.retired_reason).toBe('host decommissioned');
    expect((await (await app.call('GET', `/api/v1/jobs/${test.id}`)).json()).status).toBe('Cancelled');

    const storage = app.services.deps.storage;
    const events = async () =>
      (await storage.audit.list({ resource_id: agent.id, perPage: 50 })).items.map((e) => e.action).sort();
    expect(await events()).toEqual(['agent_registered', 'agent_retired', 'agent_retirement_cascaded']);

    app.clock.advance(1000);
    const again = await app.call('DELETE', `/api/v1/agents/${agent.id}?force=true&reason=again`);
    expect(again.status).toBe(204);
    expect(await again.text()).toBe('');
    expect(await events()).toEqual(['agent_registered', 'agent_retired', 'agent_retirement_cascaded']);
    const still = await (await app.call('GET', `/api/v1/agents/${agent.id}`)).json();
    expect(still.retired_reason).toBe('host decommissioned');
  });

  it('retires an agent without dependencies without force and without a cascade event', async () => {
    const agent = await registerAgent(app, 'idle');
    expect((await app.call('DELETE', `/api/v1/agents/${agent.id}`)).status).toBe(200);
    const actions = (await app.services.deps.storage.audit.list({ resource_id: agent.id })).items.map(
      (e) => e.action,
    );
    expect(actions.sort()).toEqual(['agent_registered', 'agent_retired']);
  });

  it('requires the admin flag', async () => {
    const agent = await registerAgent(app, 'not-by-agent');
    expect((await app.call('DELETE', `/api/v1/agents/${agent.id}`, { key: agent.key })).status).toBe(403);
  });

  it('ends consistently when retire and heartbeat race', async () => {
    for (let round = 0; round < 5; round++) {
      const agent = await registerAgent(app, `race-${round}`);
      await createTarget(app, agent.id);
      app.clock.advance(1000);
      const [retire, beat] = await Promise.all([
        app.call('DELETE', `/api/v1/agents/${agent.id}?force=true&reason=race`),
        app.call('POST', `/api/v1/agents/${agent.id}/heartbeat`, { key: agent.key }),
      ]);
      expect(retire.status).toBe(200);
      expect([200, 410]).toContain(beat.status);
      const final = await (await app.call('GET', `/api/v1/agents/${agent.id}`)).json();
      expect(final.retired_at).not.toBeNull();
      // A heartbeat is recorded only if it was serialized before the retirement.
      if (final.last_heartbeat_at !== null) {
        expect(new Date(final.last_heartbeat_at).getTime()).toBeLessThanOrEqual(
          new Date(final.retired_at).getTime(),
        );
      }
      expect(
        (await app.call('POST', `/api/v1/agents/${agent.id}/heartbeat`, { key: agent.key })).status,
      ).toBe(410);
      const targets = await (await app.call('GET', `/api/v1/targets?agent_id=${agent.id}`)).json();
      expect(targets.data.every((t: { retired_at: string }) => t.retired_at === final.retired_at)).toBe(true);
      const retiredEvents = await app.services.deps.storage.audit.list({
        action: 'agent_retired',
        resource_id: agent.id,
      });
      expect(retiredEvents.total).toBe(1);
    }
  });

  it('lets only one of two concurrent retirements record events', async () => {
    const agent = await registerAgent(app, 'double');
    const results = await Promise.all([
      app.call('DELETE', `/api/v1/agents/${agent.id}`),
      app.call('DELETE', `/api/v1/agents/${agent.id}`),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 204]);
    expect(
      (await app.services.deps.storage.audit.list({ action: 'agent_retired', resource_id: agent.id })).total,
    ).toBe(1);
  });
});

describe('work poll, CSR submission and job reports', { timeout: 30_000 }, () => {
  it('hands a deployment job to its agent with the target config and the certificate', async () => {
    const agent = await registerAgent(app, 'deployer');
    const target = await createTarget(app, agent.id);
    const cert = await seedCertificate(app, [target.id]);
    const jobs = await app.services.jobs.createDeploymentJobs(cert.certificateId, cert.versionId);
    expect(jobs).toHaveLength(1);

    const poll = await app.call('POST', `/api/v1/agents/${agent.id}/work`, { key: agent.key });
    expect(poll.status).toBe(200);
    const work = await poll.json();
    expect(work.jobs).toHaveLength(1);
    expect(work.jobs[0].job).toMatchObject({
      id: jobs[0]?.id,
      type: 'Deployment',
      status: 'Running',
      attempts: 1,
    });
    expect(work.jobs[0].target).toMatchObject({
      id: target.id,
      type: 'NGINX',
      config: { path: '/etc/nginx/tls' },
    });
    expect(work.jobs[0].certificate).toMatchObject({
      version_id: cert.versionId,
      private_key_pem: cert.keyPem,
    });
    expect(work.jobs[0].certificate.cert_pem).toContain('BEGIN CERTIFICATE');

    // A claimed job is not handed out twice.
    expect(
      (await (await app.call('POST', `/api/v1/agents/${agent.id}/work`, { key: agent.key })).json()).jobs,
    ).toEqual([]);

    const done = await app.call('POST', `/api/v1/agents/${agent.id}/jobs/${jobs[0]?.id}/status`, {
      key: agent.key,
      body: { status: 'Completed', result: { reloaded: true } },
    });
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({ status: 'Completed', result: { reloaded: true } });
    const again = await app.call('POST', `/api/v1/agents/${agent.id}/jobs/${jobs[0]?.id}/status`, {
      key: agent.key,
      body: { status: 'Failed', error: 'late' },
    });
    expect(again.status).toBe(409);
  });

  it("hides other agents' jobs (404) and validates reports", async () => {
    const a = await registerAgent(app, 'reporter-a');
    const b = await registerAgent(app, 'reporter-b');
    const target = await createTarget(app, a.id);
    const job = await (await app.call('POST', `/api/v1/targets/${target.id}/test`)).json();
    const foreign = await app.call('POST', `/api/v1/agents/${b.id}/jobs/${job.id}/status`, {
      key: b.key,
      body: { status: 'Completed' },
    });
    expect(foreign.status).toBe(404);
    const bad = await app.call('POST', `/api/v1/agents/${a.id}/jobs/${job.id}/status`, {
      key: a.key,
      body: { status: 'Cancelled' },
    });
    expect(bad.status).toBe(400);
    expect((await bad.json()).errors[0].field).toBe('status');
  });

  it('accepts a valid CSR only for an AwaitingCSR job of the agent', async () => {
    const agent = await registerAgent(app, 'keygen');
    const target = await createTarget(app, agent.id);
    const cert = await seedCertificate(app, [target.id]);
    const job = await app.services.deps.storage.jobs.create({
      type: 'Issuance',
      status: 'AwaitingCSR',
      certificate_id: cert.certificateId,
      agent_id: agent.id,
    });
    const work = await (await app.call('POST', `/api/v1/agents/${agent.id}/work`, { key: agent.key })).json();
    expect(work.awaiting_csr.map((j: { id: string }) => j.id)).toEqual([job.id]);

    const garbage = await app.call('POST', `/api/v1/agents/${agent.id}/jobs/${job.id}/csr`, {
      key: agent.key,
      body: { csr_pem: '-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n' },
    });
    expect(garbage.status).toBe(400);
    const csr = await agentCsrPem();
    const ok = await app.call('POST', `/api/v1/agents/${agent.id}/jobs/${job.id}/csr`, {
      key: agent.key,
      body: { csr_pem: csr },
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ status: 'Pending', csr_pem: csr });
    const twice = await app.call('POST', `/api/v1/agents/${agent.id}/jobs/${job.id}/csr`, {
      key: agent.key,
      body: { csr_pem: csr },
    });
    expect(twice.status).toBe(409);
    const audit = await app.services.deps.storage.audit.list({
      action: 'job_csr_submitted',
      resource_id: job.id,
    });
    expect(audit.items[0]).toMatchObject({ actor: agent.id, actor_type: 'agent' });
  });
});

describe('agents cannot forge results', { timeout: 30_000 }, () => {
  it('refuses every status report on an Issuance or Renewal job (403 not_permitted), before and after its CSR', async () => {
    const agent = await registerAgent(app, 'forger');
    const target = await createTarget(app, agent.id);
    const cert = await seedCertificate(app, [target.id]);
    const storage = app.services.deps.storage;
    for (const type of ['Issuance', 'Renewal'] as const) {
      const job = await storage.jobs.create({
        type,
        status: 'AwaitingCSR',
        certificate_id: cert.certificateId,
        agent_id: agent.id,
      });
      const report = (status: string) =>
        app.call('POST', `/api/v1/agents/${agent.id}/jobs/${job.id}/status`, {
          key: agent.key,
          body: { status, result: { version_id: 'cv-made-up' } },
        });
      for (const status of ['Completed', 'Running', 'Failed']) {
        const res = await report(status);
        expect(res.status, `${type} ${status} while AwaitingCSR`).toBe(403);
        expect(await res.json()).toMatchObject({ error: 'forbidden', job_type: type });
      }
      // Submitting the CSR is the one thing the agent does for such a job …
      const csr = await app.call('POST', `/api/v1/agents/${agent.id}/jobs/${job.id}/csr`, {
        key: agent.key,
        body: { csr_pem: await agentCsrPem() },
      });
      expect(csr.status).toBe(200);
      // … after which it still cannot declare the job done or take it over.
      for (const status of ['Completed', 'Running']) {
        expect((await report(status)).status, `${type} ${status} after the CSR`).toBe(403);
      }
      const stored = await storage.jobs.require(job.id);
      expect(stored).toMatchObject({ status: 'Pending', result: null, locked_by: null });
    }
    const events = await storage.audit.list({ action: 'job_completed', resource_id: cert.certificateId });
    expect(events.total).toBe(0);
  });

  it('answers a GET or HEAD of the work poll 405 with Allow: POST and claims nothing', async () => {
    const agent = await registerAgent(app, 'prefetched');
    const target = await createTarget(app, agent.id);
    const cert = await seedCertificate(app, [target.id]);
    const [job] = await app.services.jobs.createDeploymentJobs(cert.certificateId, cert.versionId);
    for (const method of ['GET', 'HEAD']) {
      const res = await app.call(method, `/api/v1/agents/${agent.id}/work`, { key: agent.key });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow'), method).toBe('POST');
    }
    expect(await app.services.deps.storage.jobs.require(job!.id)).toMatchObject({
      status: 'Pending',
      attempts: 0,
    });
    const poll = await (await app.call('POST', `/api/v1/agents/${agent.id}/work`, { key: agent.key })).json();
    expect(poll.jobs.map((item: { job: { id: string } }) => item.job.id)).toEqual([job!.id]);
  });

  it('audits each release of a private key or target config to an agent, without the secret', async () => {
    const agent = await registerAgent(app, 'key-receiver');
    const target = await createTarget(app, agent.id);
    const cert = await seedCertificate(app, [target.id]);
    const [job] = await app.services.jobs.createDeploymentJobs(cert.certificateId, cert.versionId);
    const work = await (await app.call('POST', `/api/v1/agents/${agent.id}/work`, { key: agent.key })).json();
    expect(work.jobs[0].certificate.private_key_pem).toBe(cert.keyPem);

    const events = await app.services.deps.storage.audit.list({
      action: 'job_secrets_released',
      resource_id: job!.id,
    });
    expect(events.items).toHaveLength(1);
    expect(events.items[0]).toMatchObject({
      actor: agent.id,
      actor_type: 'agent',
      resource_type: 'job',
      details: {
        agent_id: agent.id,
        released: ['private_key', 'target_config'],
        certificate_id: cert.certificateId,
        version_id: cert.versionId,
        target_id: target.id,
        config_keys: ['password', 'path'],
      },
    });
    const stored = JSON.stringify(events.items[0]);
    expect(stored).not.toContain('PRIVATE KEY');
    expect(stored).not.toContain('/etc/nginx/tls');
    expect(stored).not.toContain('hunter2-secret');
  });
});
