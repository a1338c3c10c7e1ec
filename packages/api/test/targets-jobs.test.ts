import { JOB_TIMEOUT_REASONS } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpsApp, createTarget, type OpsApp, registerAgent, seedCertificate } from './ops-support.js';

let app: OpsApp;
beforeAll(async () => {
  app = await createOpsApp();
}, 60_000);
afterAll(() => app?.close());

describe('targets (spec §2.3, §7)', { timeout: 30_000 }, () => {
  it('requires agent_id, name and type, each named in the 400', async () => {
    const agent = await registerAgent(app, 'target-owner');
    const full = { agent_id: agent.id, name: 'edge', type: 'NGINX' };
    for (const field of ['agent_id', 'name', 'type'] as const) {
      const { [field]: _omitted, ...body } = full;
      const res = await app.call('POST', '/api/v1/targets', { body });
      expect(res.status, field).toBe(400);
      expect((await res.json()).errors).toContainEqual({ field, message: 'is required' });
    }
    const lower = await app.call('POST', '/api/v1/targets', { body: { ...full, type: 'nginx' } });
    expect(lower.status).toBe(400);
    expect((await lower.json()).errors[0].field).toBe('type');
  });

  it('answers 400 naming agent_id for an agent that does not exist (or is retired)', async () => {
    const res = await app.call('POST', '/api/v1/targets', {
      body: { agent_id: 'ag-missing', name: 'x', type: 'Caddy' },
    });
    expect(res.status).toBe(400);
    expect((await res.json()).errors).toEqual([{ field: 'agent_id', message: 'names no existing agent' }]);
    const retired = await registerAgent(app, 'retired-owner');
    await app.call('DELETE', `/api/v1/agents/${retired.id}`);
    const res2 = await app.call('POST', '/api/v1/targets', {
      body: { agent_id: retired.id, name: 'x', type: 'Caddy' },
    });
    expect(res2.status).toBe(400);
  });

  it('never serializes a config secret, which is stored sealed; the rest of the config is shown', async () => {
    const agent = await registerAgent(app, 'sealed');
    const target = await createTarget(app, agent.id);
    expect(target.config).toEqual({ path: '/etc/nginx/tls', password: '********' });
    const bodies = [
      JSON.stringify(target),
      await (await app.call('GET', `/api/v1/targets/${target.id}`)).text(),
      await (await app.call('GET', `/api/v1/targets?agent_id=${agent.id}`)).text(),
    ];
    for (const body of bodies) {
      expect(body).not.toContain('hunter2-secret');
      expect(body).not.toContain('v1.');
    }
    // The storage keeps it sealed: the raw column is ciphertext, and only getWithConfig opens it.
    const storage = app.services.deps.storage as unknown as {
      db: {
        selectFrom(t: string): {
          selectAll(): {
            where(c: string, o: string, v: string): { executeTakeFirst(): Promise<Record<string, unknown>> };
          };
        };
      };
    };
    const row = await storage.db
      .selectFrom('deployment_targets')
      .selectAll()
      .where('id', '=', target.id)
      .executeTakeFirst();
    expect(JSON.stringify(row)).not.toContain('hunter2-secret');
    const opened = await app.services.deps.storage.targets.getWithConfig(target.id);
    expect(opened?.config).toEqual({ path: '/etc/nginx/tls', password: 'hunter2-secret' });
    const audit = await app.services.deps.storage.audit.list({
      action: 'target_created',
      resource_id: target.id,
    });
    expect(JSON.stringify(audit.items)).not.toContain('hunter2-secret');
  });

  it('runs a connection test as a Validation job whose result is readable', async () => {
    const agent = await registerAgent(app, 'tester');
    const target = await createTarget(app, agent.id, { type: 'SSH' });
    const res = await app.call('POST', `/api/v1/targets/${target.id}/test`);
    expect(res.status).toBe(202);
    const job = await res.json();
    expect(job).toMatchObject({
      type: 'Validation',
      status: 'Pending',
      target_id: target.id,
      agent_id: agent.id,
    });
    expect(res.headers.get('location')).toBe(`/api/v1/jobs/${job.id}`);

    const work = await (await app.call('POST', `/api/v1/agents/${agent.id}/work`, { key: agent.key })).json();
    expect(work.jobs[0].job.payload).toMatchObject({ kind: 'connection_test' });
    await app.call('POST', `/api/v1/agents/${agent.id}/jobs/${job.id}/status`, {
      key: agent.key,
      body: { status: 'Failed', error: 'ssh: handshake refused', result: { reachable: false } },
    });
    const result = await (await app.call('GET', `/api/v1/jobs/${job.id}`)).json();
    expect(result).toMatchObject({
      status: 'Failed',
      last_error: 'ssh: handshake refused',
      result: { reachable: false },
    });
  });
});

describe('jobs (spec §4.6)', { timeout: 30_000 }, () => {
  it('creates one deployment job per bound target and lists them', async () => {
    const agent = await registerAgent(app, 'fanout');
    const t1 = await createTarget(app, agent.id);
    const t2 = await createTarget(app, agent.id, { name: 'second' });
    const disabled = await createTarget(app, agent.id, { name: 'off', enabled: false });
    const cert = await seedCertificate(app, [t1.id, t2.id, disabled.id]);
    const jobs = await app.services.jobs.createDeploymentJobs(cert.certificateId, cert.versionId);
    expect(jobs.map((j) => j.target_id).sort()).toEqual([t1.id, t2.id].sort());
    const list = await (
      await app.call('GET', `/api/v1/jobs?certificate_id=${cert.certificateId}&type=Deployment`)
    ).json();
    expect(list.total).toBe(2);
    expect(
      list.data.every(
        (j: { status: string; agent_id: string }) => j.status === 'Pending' && j.agent_id === agent.id,
      ),
    ).toBe(true);
    expect((await app.call('GET', '/api/v1/jobs?status=Bogus')).status).toBe(400);
  });

  it('cancels open jobs once (409 after) and the agent learns it by a 409 on report', async () => {
    const agent = await registerAgent(app, 'cancel');
    const target = await createTarget(app, agent.id);
    const job = await (await app.call('POST', `/api/v1/targets/${target.id}/test`)).json();
    const res = await app.call('POST', `/api/v1/jobs/${job.id}/cancel`);
    expect(res.status).toBe(200);
    expect((await res.json()).status).toBe('Cancelled');
    expect((await app.call('POST', `/api/v1/jobs/${job.id}/cancel`)).status).toBe(409);
    const report = await app.call('POST', `/api/v1/agents/${agent.id}/jobs/${job.id}/status`, {
      key: agent.key,
      body: { status: 'Completed' },
    });
    expect(report.status).toBe(409);
    expect(
      (await app.services.deps.storage.audit.list({ action: 'job_cancelled', resource_id: job.id })).total,
    ).toBe(1);
    expect((await app.call('POST', '/api/v1/jobs/job-unknown/cancel')).status).toBe(404);
  });

  it('verifies a completed deployment through the agent: pending → success / failed; skipped when failed', async () => {
    const agent = await registerAgent(app, 'verifier');
    const target = await createTarget(app, agent.id);
    const cert = await seedCertificate(app, [target.id]);
    const [deployment] = await app.services.jobs.createDeploymentJobs(cert.certificateId, cert.versionId);
    const id = deployment?.id as string;

    expect((await app.call('GET', `/api/v1/jobs/${id}/verification`)).status).toBe(404);
    expect((await app.call('POST', `/api/v1/jobs/${id}/verify`)).status).toBe(409); // still open

    await app.call('POST', `/api/v1/agents/${agent.id}/work`, { key: agent.key });
    await app.call('POST', `/api/v1/agents/${agent.id}/jobs/${id}/status`, {
      key: agent.key,
      body: { status: 'Completed' },
    });
    const verify = await app.call('POST', `/api/v1/jobs/${id}/verify`);
    expect(verify.status).toBe(202);
    const pending = await verify.json();
    expect(pending).toMatchObject({ job_id: id, status: 'pending' });

    const work = await (await app.call('POST', `/api/v1/agents/${agent.id}/work`, { key: agent.key })).json();
    const check = work.jobs.find((w: { job: { id: string } }) => w.job.id === pending.validation_job_id);
    expect(check.job.payload).toMatchObject({ kind: 'deployment_verification', job_id: id });
    await app.call('POST', `/api/v1/agents/${agent.id}/jobs/${pending.validation_job_id}/status`, {
      key: agent.key,
      body: { status: 'Completed', result: { detail: 'serial matches on :443' } },
    });
    const done = await (await app.call('GET', `/api/v1/jobs/${id}/verification`)).json();
    expect(done).toMatchObject({ status: 'success', detail: 'serial matches on :443' });
    expect(done.verified_at).toBe(app.clock.now().toISOString());

    // A second verification that the agent reports failed.
    const again = await (await app.call('POST', `/api/v1/jobs/${id}/verify`)).json();
    await app.call('POST', `/api/v1/agents/${agent.id}/work`, { key: agent.key });
    await app.call('POST', `/api/v1/agents/${agent.id}/jobs/${again.validation_job_id}/status`, {
      key: agent.key,
      body: { status: 'Failed', error: 'served serial differs' },
    });
    expect(await (await app.call('GET', `/api/v1/jobs/${id}/verification`)).json()).toMatchObject({
      status: 'failed',
      detail: 'served serial differs',
    });

    // A failed deployment has nothing to verify.
    const [second] = await app.services.jobs.createDeploymentJobs(cert.certificateId, cert.versionId);
    await app.call('POST', `/api/v1/agents/${agent.id}/work`, { key: agent.key });
    await app.call('POST', `/api/v1/agents/${agent.id}/jobs/${second?.id}/status`, {
      key: agent.key,
      body: { status: 'Failed', error: 'permission denied' },
    });
    const skipped = await (await app.call('POST', `/api/v1/jobs/${second?.id}/verify`)).json();
    expect(skipped.status).toBe('skipped');

    // Only deployments can be verified.
    const test = await (await app.call('POST', `/api/v1/targets/${target.id}/test`)).json();
    expect((await app.call('POST', `/api/v1/jobs/${test.id}/verify`)).status).toBe(409);
  });

  it('notifies the certificate owner of a reported deployment result (success and failure), by email', async () => {
    const agent = await registerAgent(app, 'deploy-notes');
    const target = await createTarget(app, agent.id, { name: 'edge-notes' });
    const cert = await seedCertificate(app, [target.id]);
    const notes = async (type: string) =>
      (
        await (
          await app.call('GET', `/api/v1/notifications?certificate_id=${cert.certificateId}&type=${type}`)
        ).json()
      ).data;
    // Three deployments of the same version to the one bound target (as three issuances would).
    const jobs = [];
    for (let i = 0; i < 3; i++) {
      jobs.push(...(await app.services.jobs.createDeploymentJobs(cert.certificateId, cert.versionId)));
    }
    expect(jobs).toHaveLength(3);
    expect(await notes('DeploymentSuccess')).toEqual([]);
    await app.call('POST', `/api/v1/agents/${agent.id}/work`, { key: agent.key });
    const report = (id: string, body: unknown) =>
      app.call('POST', `/api/v1/agents/${agent.id}/jobs/${id}/status`, { key: agent.key, body });

    // Progress reports raise nothing; the end of the job does.
    expect((await report(jobs[0]!.id, { status: 'Running' })).status).toBe(200);
    expect(await notes('DeploymentSuccess')).toEqual([]);
    expect((await report(jobs[0]!.id, { status: 'Completed' })).status).toBe(200);
    const success = await notes('DeploymentSuccess');
    expect(success).toHaveLength(1);
    expect(success[0]).toMatchObject({
      channel: 'email',
      recipient: 'owner@example.test',
      status: 'undeliverable', // this app has no e-mail channel
      certificate_id: cert.certificateId,
    });
    expect(success[0].message).toContain('edge-notes');
    expect(success[0].message).toContain(jobs[0]!.id);

    expect((await report(jobs[1]!.id, { status: 'Failed', error: 'permission denied' })).status).toBe(200);
    const failure = await notes('DeploymentFailure');
    expect(failure).toHaveLength(1);
    expect(failure[0]).toMatchObject({ channel: 'email', recipient: 'owner@example.test' });
    expect(failure[0].message).toContain('permission denied');

    // A report refused (the job was cancelled) raises nothing: the notification is written in
    // the transaction of the change it describes.
    expect((await app.call('POST', `/api/v1/jobs/${jobs[2]!.id}/cancel`)).status).toBe(200);
    expect((await report(jobs[2]!.id, { status: 'Failed', error: 'too late' })).status).toBe(409);
    expect(await notes('DeploymentFailure')).toHaveLength(1);
    expect(await notes('DeploymentSuccess')).toHaveLength(1);
  });

  it('raises DeploymentFailure when a deployment times out on its agent', async () => {
    const agent = await registerAgent(app, 'deploy-timeout');
    const target = await createTarget(app, agent.id, { name: 'edge-timeout' });
    const cert = await seedCertificate(app, [target.id]);
    const job = await app.services.deps.storage.jobs.create({
      type: 'Deployment',
      certificate_id: cert.certificateId,
      target_id: target.id,
      agent_id: agent.id,
      max_attempts: 1,
      payload: { version_id: cert.versionId, target_type: 'NGINX' },
    });
    await app.call('POST', `/api/v1/agents/${agent.id}/work`, { key: agent.key }); // claims it
    app.clock.advance(app.services.agents.settings.jobLeaseMs + 1);
    expect((await app.services.jobs.failTimedOutJobs()).map((j) => j.id)).toContain(job.id);
    const notes = await (
      await app.call(
        'GET',
        `/api/v1/notifications?certificate_id=${cert.certificateId}&type=DeploymentFailure`,
      )
    ).json();
    expect(notes.total).toBe(1);
    expect(notes.data[0].message).toContain(JOB_TIMEOUT_REASONS.lease);
  });

  it('times out stuck jobs: expired leases with no attempts left, and CSR waits', async () => {
    const agent = await registerAgent(app, 'stuck');
    const target = await createTarget(app, agent.id);
    const job = await (await app.call('POST', `/api/v1/targets/${target.id}/test`)).json(); // max_attempts 1
    const cert = await seedCertificate(app, [target.id]);
    const awaiting = await app.services.deps.storage.jobs.create({
      type: 'Renewal',
      status: 'AwaitingCSR',
      certificate_id: cert.certificateId,
      agent_id: agent.id,
    });
    await app.call('POST', `/api/v1/agents/${agent.id}/work`, { key: agent.key }); // claims the test job
    const settings = app.services.agents.settings;

    app.clock.advance(settings.jobLeaseMs); // lease ends exactly now: not yet expired
    expect(await app.services.jobs.failTimedOutJobs()).toEqual([]);
    app.clock.advance(1);
    const failed = await app.services.jobs.failTimedOutJobs();
    expect(failed.map((j) => j.id)).toEqual([job.id]);
    expect(await (await app.call('GET', `/api/v1/jobs/${job.id}`)).json()).toMatchObject({
      status: 'Failed',
      last_error: JOB_TIMEOUT_REASONS.lease,
    });

    app.clock.advance(settings.csrTimeoutMs);
    const csrFailed = await app.services.jobs.failTimedOutJobs();
    expect(csrFailed.map((j) => j.id)).toContain(awaiting.id);
    expect(await (await app.call('GET', `/api/v1/jobs/${awaiting.id}`)).json()).toMatchObject({
      status: 'Failed',
      last_error: JOB_TIMEOUT_REASONS.csr,
    });
    expect(
      (await app.services.deps.storage.audit.list({ action: 'job_timed_out', resource_id: job.id })).total,
    ).toBe(1);
  });
});
