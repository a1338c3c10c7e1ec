import { ManualClock, SYSTEM_ACTOR } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLifecycleApp, type LifecycleApp } from './lifecycle-support.js';

/** Bulk renewal opens its jobs exactly like single renewal and the renewal scan do. */

let app: LifecycleApp;
const clock = new ManualClock('2026-01-01T00:00:00Z');

beforeAll(async () => {
  app = await createLifecycleApp({ clock });
});
afterAll(() => app.close());

async function agentKeyedCertificate(tag: string) {
  const agent = await app.storage.agents.create({
    name: `edge-${tag}`,
    hostname: `edge-${tag}.internal`,
    os: 'linux',
    architecture: 'amd64',
    ip_address: '10.0.0.1',
    version: '2.0.0',
    api_key_hash: null,
  });
  const target = await app.storage.targets.create({
    agent_id: agent.id,
    name: `nginx-${tag}`,
    type: 'NGINX',
  });
  const profile = await app.services.profiles.create(SYSTEM_ACTOR, {
    name: `agent-keys-${tag}`,
    max_validity_days: 90,
    key_generation: 'agent',
  });
  const policy = await app.services.renewalPolicies.create(SYSTEM_ACTOR, {
    name: `four-retries-${tag}`,
    renewal_window_days: 30,
    max_retries: 4,
  });
  const cert = await app.storage.certificates.create({
    name: `agent-${tag}`,
    common_name: `agent-${tag}.example.test`,
    renewal_policy_id: policy.id,
    issuer_id: app.ids.issuer,
    owner_id: app.ids.owner,
    team_id: app.ids.team,
    profile_id: profile.id,
    status: 'Active',
  });
  await app.storage.certificates.setTargets(cert.id, [target.id]);
  return { agent, cert };
}

describe('bulk renewal of agent-keyed certificates', () => {
  it("offers the renewal to the certificate's agent in its work poll, with the renewal policy's attempts", async () => {
    const { agent, cert } = await agentKeyedCertificate('poll');
    const result = await app.services.bulk.renew(SYSTEM_ACTOR, { certificate_ids: [cert.id] });
    expect(result).toMatchObject({ total_renewed: 1, total_failed: 0 });
    const jobId = result.enqueued_jobs[0]!.job_id;

    const work = await app.services.agents.work(agent.id);
    expect(work.awaiting_csr.map((j) => j.id)).toEqual([jobId]);
    expect(work.awaiting_csr[0]).toMatchObject({
      type: 'Renewal',
      status: 'AwaitingCSR',
      certificate_id: cert.id,
      agent_id: agent.id,
      max_attempts: 5,
    });
    expect((await app.services.certificates.get(cert.id)).status).toBe('RenewalInProgress');
  });

  it('reuses an open renewal job instead of opening a second one', async () => {
    const { cert } = await agentKeyedCertificate('open');
    const first = await app.storage.transaction((tx) =>
      app.services.pki.lifecycle.openJob(cert.id, 'Renewal', tx),
    );
    const result = await app.services.bulk.renew(SYSTEM_ACTOR, { certificate_ids: [cert.id] });
    expect(result.enqueued_jobs).toEqual([{ certificate_id: cert.id, job_id: first.id }]);
    const jobs = await app.services.jobs.list({ certificate_id: cert.id, type: 'Renewal' });
    expect(jobs.data.map((j) => j.id)).toEqual([first.id]);
  });
});
