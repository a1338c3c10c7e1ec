import {
  createLocalCaConnector,
  type IssueRequest,
  IssuerConnectorRegistry,
  type Logger,
  NotificationChannelRegistry,
} from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { certificateBody, type References, seedReferences } from './support/inventory-fixtures.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Internal causes (a connector's, a transport's or the storage's own message) must reach the
 * log, never a job, an audit event, a notification or a response, which API users can read.
 */
const CAUSE =
  'duplicate key value violates unique constraint "certificate_versions_pkey" (/var/lib/certwright/pgdata/base/16384)';
const TRANSPORT_CAUSE = 'connect ECONNREFUSED /run/postfix/private/smtp.sock';
const leaks = (value: unknown) =>
  /certificate_versions_pkey|\/var\/lib|\/run\/postfix|ECONNREFUSED/.test(JSON.stringify(value));

const logged: { level: string; fields: Record<string, unknown>; message?: string }[] = [];
const logger: Logger = {
  debug: (fields, message) => logged.push({ level: 'debug', fields: { ...fields }, message }),
  info: (fields, message) => logged.push({ level: 'info', fields: { ...fields }, message }),
  warn: (fields, message) => logged.push({ level: 'warn', fields: { ...fields }, message }),
  error: (fields, message) => logged.push({ level: 'error', fields: { ...fields }, message }),
  child: () => logger,
};
/** The log entries that carry `cause` as their error, with their fields. */
const causeLogged = (cause: string) =>
  logged.filter((entry) => (entry.fields.err as Error | undefined)?.message === cause).map((e) => e.fields);

/** The real Local CA, except that signing fails with a storage-like message while `failing`. */
let failing = false;
const connectors = new IssuerConnectorRegistry().register('Local', async (context) => {
  const real = await createLocalCaConnector(context);
  const sign = (run: () => ReturnType<typeof real.issue>) =>
    failing ? Promise.reject(new Error(CAUSE)) : run();
  return {
    type: real.type,
    issuerId: real.issuerId,
    capabilities: real.capabilities,
    issue: (request: IssueRequest) => sign(() => real.issue(request)),
    renew: (request: IssueRequest) => sign(() => real.renew(request)),
    revoke: (serial, reason) => real.revoke(serial, reason),
    caChain: () => real.caChain(),
  };
});
const channels = new NotificationChannelRegistry();

let app: TestApp;
let refs: References;
let policy: string;

beforeAll(async () => {
  app = await createTestApp({
    logger,
    deps: { notifications: { channels } },
    services: { pki: { connectors } },
  });
  refs = await seedReferences(app);
  // One attempt: the first failure is final, so it raises RenewalFailure.
  const rp = await app.call('POST', '/api/v1/renewal-policies', { name: 'one attempt', max_retries: 0 });
  policy = rp.body.id;
}, 60_000);
afterAll(() => app?.close());

async function activeCertificate(name: string): Promise<string> {
  const created = await app.call(
    'POST',
    '/api/v1/certificates',
    certificateBody(refs, { name, renewal_policy_id: policy, profile_id: refs.profile }),
  );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const issued = await app.call('POST', `/api/v1/certificates/${created.body.id}/issue`);
  expect(issued.status, JSON.stringify(issued.body)).toBe(200);
  return created.body.id;
}

async function traces(certificateId: string) {
  const jobs = await app.call('GET', `/api/v1/jobs?certificate_id=${certificateId}&type=Renewal`);
  const audit = await app.services.deps.storage.audit.list({ resource_id: certificateId, perPage: 50 });
  const notes = await app.call(
    'GET',
    `/api/v1/notifications?certificate_id=${certificateId}&type=RenewalFailure`,
  );
  return {
    job: jobs.body.data[0],
    failure: audit.items.find((e) => e.action === 'certificate_renewal_failed'),
    notification: notes.body.data[0],
  };
}

describe('an internal failure shows a safe sentence and logs its cause', { timeout: 60_000 }, () => {
  it('a renewal whose CA call fails: response, job, audit event and notification hold the sentence', async () => {
    const id = await activeCertificate('privacy-sync');
    failing = true;
    const res = await app.call('POST', `/api/v1/certificates/${id}/renew`);
    failing = false;
    expect(res.status).toBe(500);
    expect(res.body.detail).toBe('internal error');
    expect(leaks(res.body)).toBe(false);

    const { job, failure, notification } = await traces(id);
    expect(job).toMatchObject({ status: 'Failed', last_error: 'internal error' });
    expect(failure?.details).toMatchObject({ job_id: job.id, error: 'internal error', will_retry: false });
    expect(notification.message).toContain('Last error: internal error');
    expect(leaks([job, failure, notification])).toBe(false);
    // Operators find the cause in the log under the job's id.
    expect(causeLogged(CAUSE)).toContainEqual(
      expect.objectContaining({ job_id: job.id, certificate_id: id }),
    );
  });

  it('a renewal run by the job worker: the same, with the cause logged once under the job id', async () => {
    const id = await activeCertificate('privacy-worker');
    const before = causeLogged(CAUSE).length;
    await app.services.deps.storage.transaction((tx) =>
      app.services.pki.lifecycle.openJob(id, 'Renewal', tx),
    );
    failing = true;
    await app.services.pki.lifecycle.processDueJobs();
    failing = false;
    const { job, failure, notification } = await traces(id);
    expect(job).toMatchObject({ status: 'Failed', last_error: 'internal error' });
    expect(failure?.details).toMatchObject({ error: 'internal error' });
    expect(notification.message).toContain('Last error: internal error');
    expect(leaks([job, failure, notification])).toBe(false);
    const entries = causeLogged(CAUSE).slice(before);
    expect(entries).toEqual([expect.objectContaining({ job_id: job.id })]);
  });

  it('a channel that throws: the notification and its dead-letter audit event hold the sentence', async () => {
    channels.register({
      name: 'leaky',
      send: async () => {
        throw new Error(TRANSPORT_CAUSE);
      },
    });
    const queued = await app.call('POST', '/api/v1/notifications', {
      type: 'ExpirationWarning',
      channel: 'leaky',
      recipient: 'ops@example.test',
      subject: 's',
      message: 'm',
    });
    expect(queued.status).toBe(201);
    // The whole retry budget: five attempts, then dead.
    for (let attempt = 0; attempt < 5; attempt += 1) {
      await app.services.notifications.sweep(new Date(app.clock.now().getTime() + (attempt + 1) * 7_200_000));
    }
    const event = (await app.call('GET', `/api/v1/notifications/${queued.body.id}`)).body;
    expect(event).toMatchObject({ status: 'dead', last_error: 'internal error' });
    const audit = await app.services.deps.storage.audit.list({ resource_id: queued.body.id, perPage: 10 });
    const dead = audit.items.find((e) => e.action === 'notification_dead');
    expect(dead?.details).toMatchObject({ last_error: 'internal error' });
    expect(leaks([event, dead])).toBe(false);
    expect(causeLogged(TRANSPORT_CAUSE)).toHaveLength(5);
    expect(causeLogged(TRANSPORT_CAUSE)[0]).toMatchObject({ notification_id: queued.body.id });
    channels.unregister('leaky');
  });
});
