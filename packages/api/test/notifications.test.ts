import type { AddressInfo } from 'node:net';
import { createSmtpChannel } from '@certwright/notify-smtp';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpsApp, type OpsApp } from './ops-support.js';

/** A real SMTP server on loopback that refuses every recipient while `refusing` is set. */
let refusing = true;
const delivered: string[] = [];
let smtp: SMTPServer;
let app: OpsApp;

beforeAll(async () => {
  smtp = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(_address, _session, callback) {
      if (refusing) return callback(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }));
      return callback();
    },
    onData(stream, session, callback) {
      stream.resume();
      stream.on('end', () => {
        delivered.push(...session.envelope.rcptTo.map((r) => r.address));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const port = (smtp.server.address() as AddressInfo).port;
  app = await createOpsApp();
  app.channels.register(createSmtpChannel({ host: '127.0.0.1', port, from: 'certwright@example.test' }));
}, 60_000);
afterAll(async () => {
  await app?.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

const queue = async (overrides: Record<string, unknown> = {}) => {
  const res = await app.call('POST', '/api/v1/notifications', {
    body: {
      type: 'ExpirationWarning',
      channel: 'email',
      recipient: 'ops@example.test',
      subject: 'expiring',
      message: 'renew soon',
      ...overrides,
    },
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; status: string; created_at: string };
};
const read = async (id: string) => (await app.call('GET', `/api/v1/notifications/${id}`)).json();
const minutes = (n: number) => n * 60_000;

describe('notification delivery and the retry sweep (spec §3.1)', { timeout: 60_000 }, () => {
  it('walks failed → … → dead on the documented schedule, and requeue brings it back', async () => {
    refusing = true;
    const deadBefore = app.dead.length;
    const event = await queue({ recipient: 'walk@example.test' });
    expect(event.status).toBe('pending');
    const t0 = app.clock.now().getTime();

    // Attempt 1: the first delivery of the pending event.
    await app.services.notifications.sweep();
    let n = await read(event.id);
    expect(n).toMatchObject({ status: 'failed', retry_count: 1 });
    expect(n.last_error).toBe('SMTP delivery failed (reply code 550, EENVELOPE)');
    expect(n.next_retry_at).toBe(new Date(t0 + minutes(2)).toISOString());

    // Attempts 2–4: each due exactly at next_retry_at, backing off 2^n minutes.
    const expected = [
      { count: 2, delay: 4 },
      { count: 3, delay: 8 },
      { count: 4, delay: 16 },
    ];
    for (const step of expected) {
      // One millisecond early: not due, nothing happens.
      app.clock.set(new Date(new Date(n.next_retry_at).getTime() - 1));
      await app.services.notifications.sweep();
      expect(await read(event.id)).toMatchObject({ retry_count: step.count - 1, status: 'failed' });
      app.clock.set(n.next_retry_at);
      await app.services.notifications.sweep();
      n = await read(event.id);
      expect(n).toMatchObject({ status: 'failed', retry_count: step.count });
      expect(n.next_retry_at).toBe(new Date(app.clock.now().getTime() + minutes(step.delay)).toISOString());
    }

    // Attempt 5 at retry_count 4: the budget is spent → dead.
    app.clock.set(n.next_retry_at);
    await app.services.notifications.sweep();
    n = await read(event.id);
    expect(n).toMatchObject({ status: 'dead', retry_count: 4, next_retry_at: null });
    expect(n.last_error).toBeTruthy();
    expect(app.dead.length).toBe(deadBefore + 1);
    expect(app.dead.at(-1)?.id).toBe(event.id);

    // Dead events are never swept again.
    app.clock.advance(minutes(600));
    await app.services.notifications.sweep();
    expect((await read(event.id)).status).toBe('dead');

    const deadList = await (await app.call('GET', '/api/v1/notifications?status=dead')).json();
    expect(deadList.data.map((e: { id: string }) => e.id)).toContain(event.id);
    const summary = await (await app.call('GET', '/api/v1/dashboard/summary')).json();
    expect(summary.dead_notifications).toBeGreaterThanOrEqual(1);
    expect(summary.notifications.dead).toBe(summary.dead_notifications);

    // Requeue: dead → pending with a clean slate, then a working server delivers it.
    const requeue = await app.call('POST', `/api/v1/notifications/${event.id}/requeue`);
    expect(requeue.status).toBe(200);
    expect(await requeue.json()).toMatchObject({
      status: 'pending',
      retry_count: 0,
      next_retry_at: null,
      last_error: null,
    });
    refusing = false;
    await app.services.notifications.sweep();
    n = await read(event.id);
    expect(n).toMatchObject({ status: 'sent', retry_count: 0 });
    expect(delivered).toContain('walk@example.test');
    const audit = await app.services.deps.storage.audit.list({ resource_id: event.id, perPage: 10 });
    expect(audit.items.map((e) => e.action).sort()).toEqual([
      'notification_created',
      'notification_dead',
      'notification_requeued',
    ]);
  });

  it('a retry that succeeds is sent with retry_count unchanged', async () => {
    refusing = true;
    const event = await queue({ recipient: 'recover@example.test' });
    await app.services.notifications.sweep();
    const failed = await read(event.id);
    expect(failed.retry_count).toBe(1);
    refusing = false;
    app.clock.set(failed.next_retry_at);
    await app.services.notifications.sweep();
    expect(await read(event.id)).toMatchObject({ status: 'sent', retry_count: 1 });
  });

  it('an event whose webhook no longer exists is undeliverable, never sent', async () => {
    const event = await queue({ channel: 'webhook:wh-removed' });
    const report = await app.services.notifications.sweep();
    expect(report.undeliverable).toBeGreaterThanOrEqual(1);
    const n = await read(event.id);
    expect(n).toMatchObject({ status: 'undeliverable', sent_at: null });
    expect(n.last_error).toMatch(/does not exist \(deleted\); not delivered/);
  });

  it('an event for a channel this server does not have is undeliverable at once, counted, and requeueable', async () => {
    const before = (await (await app.call('GET', '/api/v1/dashboard/summary')).json())
      .undeliverable_notifications;
    const event = await queue({ channel: 'pager' });
    expect(event.status).toBe('undeliverable');
    const n = await read(event.id);
    expect(n.last_error).toBe("no notification channel 'pager' is configured; not delivered");
    const summary = await (await app.call('GET', '/api/v1/dashboard/summary')).json();
    expect(summary.undeliverable_notifications).toBe(before + 1);
    expect(summary.notifications.undeliverable).toBe(before + 1);
    expect((await app.call('GET', '/api/v1/notifications?status=undeliverable&per_page=500')).status).toBe(
      200,
    );
    // Once such a channel exists, a requeue delivers it.
    const got: string[] = [];
    app.channels.register({ name: 'pager', send: async (e) => void got.push(e.id) });
    try {
      expect((await app.call('POST', `/api/v1/notifications/${event.id}/requeue`)).status).toBe(200);
      await app.services.notifications.sweep();
      expect(got).toEqual([event.id]);
      expect(await read(event.id)).toMatchObject({ status: 'sent' });
    } finally {
      app.channels.unregister('pager');
    }
  });

  it('a channel that throws synchronously loses nothing: the event is failed, not gone', async () => {
    app.channels.register({
      name: 'broken',
      send: () => {
        throw new TypeError('connector exploded');
      },
    });
    const event = await queue({ channel: 'broken' });
    const report = await app.services.notifications.sweep();
    expect(report.failed).toBeGreaterThanOrEqual(1);
    expect(await read(event.id)).toMatchObject({
      status: 'failed',
      retry_count: 1,
      // A thrown TypeError is an internal cause: the event keeps the public sentence only.
      last_error: 'internal error',
    });
    app.channels.unregister('broken');
  });

  it('requeue of anything but dead is 409; unknown is 404', async () => {
    const event = await queue();
    const res = await app.call('POST', `/api/v1/notifications/${event.id}/requeue`);
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ error: 'conflict', notification_status: 'pending' });
    expect((await app.call('POST', '/api/v1/notifications/ntf-nope/requeue')).status).toBe(404);
  });

  it('sets created_at to now when the caller leaves it zero', async () => {
    const zero = await queue({ created_at: '1970-01-01T00:00:00Z' });
    expect(zero.created_at).toBe(app.clock.now().toISOString());
    const omitted = await queue();
    expect(omitted.created_at).toBe(app.clock.now().toISOString());
    const given = await queue({ created_at: '2026-02-01T10:00:00Z' });
    expect(given.created_at).toBe('2026-02-01T10:00:00.000Z');
  });

  it('filters the list by status, rejects unknown statuses, and marks sent events read', async () => {
    refusing = false;
    const event = await queue({ recipient: 'reader@example.test' });
    await app.services.notifications.sweep();
    const sent = await (await app.call('GET', '/api/v1/notifications?status=sent,read&per_page=500')).json();
    expect(sent.data.every((e: { status: string }) => ['sent', 'read'].includes(e.status))).toBe(true);
    expect((await app.call('GET', '/api/v1/notifications?status=lost')).status).toBe(400);
    const readRes = await app.call('POST', `/api/v1/notifications/${event.id}/read`);
    expect(readRes.status).toBe(200);
    expect((await readRes.json()).status).toBe('read');
  });
});
