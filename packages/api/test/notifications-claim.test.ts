import { NOTIFICATION_CLAIM_LEASE_MS, type NotificationEvent } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpsApp, type OpsApp } from './ops-support.js';

/**
 * Each send a receiver would see, by event id. The send yields to the event loop before it
 * answers, so a second delivery path gets every chance to read the event as still pending.
 */
const sends: string[] = [];
let app: OpsApp;

beforeAll(async () => {
  app = await createOpsApp();
  app.channels.register({
    name: 'recording',
    async send(event: NotificationEvent) {
      sends.push(event.id);
      await new Promise((resolve) => setImmediate(resolve));
    },
  });
}, 60_000);
afterAll(async () => {
  await app?.close();
});

const raise = async () => {
  const res = await app.call('POST', '/api/v1/notifications', {
    body: { type: 'RenewalSuccess', channel: 'recording', recipient: 'r', subject: 's', message: 'm' },
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
};
const sendsOf = (id: string) => sends.filter((s) => s === id).length;

describe('one send per notification attempt', { timeout: 60_000 }, () => {
  it('a sweep racing the queue job, and a second sweep, send the event once', async () => {
    const id = await raise();
    const notifications = app.services.notifications;
    const reports = await Promise.all([
      notifications.sweep(),
      notifications.deliver(id),
      notifications.sweep(),
    ]);
    expect(sendsOf(id)).toBe(1);
    expect(reports.reduce((sum, r) => sum + r.sent, 0)).toBe(1);
    expect(await notifications.get(id)).toMatchObject({ status: 'sent', retry_count: 0 });
  });

  it('many events under several concurrent sweeps and jobs: each sent exactly once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await raise());
    const notifications = app.services.notifications;
    await Promise.all([
      notifications.sweep(),
      notifications.sweep(),
      ...ids.map((id) => notifications.deliver(id)),
      notifications.sweep(),
    ]);
    expect(ids.map(sendsOf)).toEqual(ids.map(() => 1));
  });

  it('an event whose sender died mid-send stays pending and is sent once its lease expired', async () => {
    const id = await raise();
    const storage = app.services.deps.storage;
    // A process claims the event and dies before writing any status.
    const now = app.clock.now();
    const event = await storage.notifications.require(id);
    expect(
      await storage.notifications.claim(event, now, new Date(now.getTime() + NOTIFICATION_CLAIM_LEASE_MS)),
    ).not.toBeNull();

    await app.services.notifications.sweep();
    await app.services.notifications.deliver(id);
    expect(sendsOf(id)).toBe(0);
    // The API still shows it pending: the claim is not a status.
    expect(await app.services.notifications.get(id)).toMatchObject({
      status: 'pending',
      next_retry_at: null,
    });

    app.clock.advance(NOTIFICATION_CLAIM_LEASE_MS);
    await Promise.all([app.services.notifications.sweep(), app.services.notifications.deliver(id)]);
    expect(sendsOf(id)).toBe(1);
    expect(await app.services.notifications.get(id)).toMatchObject({ status: 'sent' });
  });
});
