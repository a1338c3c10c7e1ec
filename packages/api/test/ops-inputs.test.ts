import { isCertwrightError, SYSTEM_ACTOR } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpsApp, createTarget, type OpsApp, registerAgent } from './ops-support.js';

let app: OpsApp;
beforeAll(async () => {
  app = await createOpsApp();
}, 60_000);
afterAll(() => app?.close());

/** The fields a refused in-process call names; fails the test when the call succeeds. */
async function refusedFields(call: () => Promise<unknown>): Promise<string[]> {
  try {
    await call();
  } catch (error) {
    if (!isCertwrightError(error)) throw error;
    expect(error.code).toBe('validation_failed');
    expect(error.reason).toBe('invalid_input');
    return error.fields.map((f) => f.field);
  }
  throw new Error('the call was accepted');
}

describe('services refuse bad input themselves, naming the field (no HTTP in between)', {
  timeout: 30_000,
}, () => {
  it('agents: registration, heartbeat and retirement options', async () => {
    const agents = app.services.agents;
    expect(await refusedFields(() => agents.register(SYSTEM_ACTOR, { name: 'x' } as never))).toEqual([
      'hostname',
    ]);
    expect(await refusedFields(() => agents.register(SYSTEM_ACTOR, { name: ' ', hostname: 'h' }))).toEqual([
      'name',
    ]);
    const agent = await registerAgent(app, 'inputs-agent');
    expect(
      await refusedFields(() => agents.heartbeat(agent.id, { failures: 'disk' as unknown as string[] })),
    ).toEqual(['failures']);
    expect(
      await refusedFields(() => agents.retire(SYSTEM_ACTOR, agent.id, { force: 'maybe' as never })),
    ).toEqual(['force']);
    // Nothing was written by the refused heartbeat.
    expect((await agents.get(agent.id)).last_heartbeat_at).toBeNull();
  });

  it('targets: create and update', async () => {
    const targets = app.services.targets;
    const agent = await registerAgent(app, 'inputs-targets');
    expect(
      (
        await refusedFields(() =>
          targets.create(SYSTEM_ACTOR, { agent_id: agent.id, name: '', type: 'nginx' as never }),
        )
      ).sort(),
    ).toEqual(['name', 'type']);
    const target = await createTarget(app, agent.id);
    expect(
      await refusedFields(() => targets.update(SYSTEM_ACTOR, target.id, { enabled: 'yes' as never })),
    ).toEqual(['enabled']);
    expect((await targets.get(target.id)).enabled).toBe(true);
  });

  it('jobs: agent reports, CSR submissions and list filters', async () => {
    const jobs = app.services.jobs;
    const agent = await registerAgent(app, 'inputs-jobs');
    const target = await createTarget(app, agent.id);
    const test = await app.services.targets.requestConnectionTest(SYSTEM_ACTOR, target.id);
    expect(
      await refusedFields(() => jobs.reportFromAgent(agent.id, test.id, { status: 'Cancelled' as never })),
    ).toEqual(['status']);
    expect(await refusedFields(() => jobs.submitCsr(agent.id, test.id, ''))).toEqual(['csr_pem']);
    expect(await refusedFields(() => jobs.list({ status: 'Sleeping' }))).toEqual(['status.0']);
    expect((await jobs.get(test.id)).status).toBe('Pending');
  });

  it('notifications: create and list filters', async () => {
    const notifications = app.services.notifications;
    const input = {
      type: 'Bogus',
      channel: 'email',
      recipient: 'a@example.test',
      subject: 's',
      message: 'm',
    };
    expect(await refusedFields(() => notifications.create(SYSTEM_ACTOR, input as never))).toEqual(['type']);
    expect(await refusedFields(() => notifications.list({ type: 'Bogus' as never }))).toEqual(['type']);
  });
});

describe('one paging rule for every list', { timeout: 60_000 }, () => {
  const lists = [
    '/api/v1/agents',
    '/api/v1/agents/retired',
    '/api/v1/targets',
    '/api/v1/jobs',
    '/api/v1/notifications',
    '/api/v1/audit',
    '/api/v1/owners',
    '/api/v1/certificates',
  ];

  it('reads page < 1 as 1, per_page < 1 as 50 and per_page > 500 as 500', async () => {
    for (const path of lists) {
      for (const [query, page, perPage] of [
        ['page=0&per_page=0', 1, 50],
        ['page=-3&per_page=-1', 1, 50],
        ['per_page=501', 1, 500],
        ['page=2&per_page=7', 2, 7],
        ['', 1, 50],
      ] as const) {
        const res = await app.call('GET', `${path}?${query}`);
        expect(res.status, `${path}?${query}`).toBe(200);
        const body = await res.json();
        // The certificate list also answers keyset paging (docs/api/inventory.md).
        const keys =
          path === '/api/v1/certificates'
            ? ['data', 'next_cursor', 'page', 'per_page', 'total', 'total_estimated']
            : ['data', 'page', 'per_page', 'total'];
        expect(Object.keys(body).sort(), path).toEqual(keys);
        expect({ page: body.page, per_page: body.per_page }, `${path}?${query}`).toEqual({
          page,
          per_page: perPage,
        });
      }
    }
  });

  it('answers 400 naming the parameter when it is not an integer', async () => {
    for (const path of lists) {
      for (const [query, field] of [
        ['page=abc', 'page'],
        ['per_page=1.5', 'per_page'],
      ] as const) {
        const res = await app.call('GET', `${path}?${query}`);
        expect(res.status, `${path}?${query}`).toBe(400);
        expect((await res.json()).errors[0].field, `${path}?${query}`).toBe(field);
      }
    }
  });

  it('returns the same page type in-process, with the numbers applied', async () => {
    const services = app.services;
    for (const page of [
      await services.agents.list({ page: 0, per_page: 0 }),
      await services.agents.listRetired({ page: -1, per_page: 900 }),
      await services.targets.list({ page: 0 }),
      await services.jobs.list({ per_page: 0 }),
      await services.notifications.list({ per_page: 501 }),
      await services.owners.list({ page: 0, per_page: 0 }),
    ]) {
      expect(Object.keys(page).sort()).toEqual(['data', 'page', 'per_page', 'total']);
      expect(page.page).toBe(1);
      expect([50, 500]).toContain(page.per_page);
    }
  });
});

describe('operator notifications are audited with their actor', { timeout: 30_000 }, () => {
  it('records notification_created for POST /api/v1/notifications', async () => {
    const res = await app.call('POST', '/api/v1/notifications', {
      body: {
        type: 'EndpointHealth',
        channel: 'email',
        recipient: 'ops@example.test',
        subject: 's',
        message: 'm',
      },
    });
    expect(res.status).toBe(201);
    const event = await res.json();
    const audit = await app.services.deps.storage.audit.list({
      action: 'notification_created',
      resource_id: event.id,
    });
    expect(audit.items).toHaveLength(1);
    expect(audit.items[0]).toMatchObject({
      actor_type: 'api_key',
      resource_type: 'notification',
      details: { type: 'EndpointHealth', channel: 'email', certificate_id: null },
    });
  });
});
