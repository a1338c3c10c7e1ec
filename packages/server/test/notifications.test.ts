import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { SecretBox, silentLogger } from '@certwright/core';
import { createPostgresStorage } from '@certwright/storage-pg';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTempDatabase, postgresSkipReason } from '../../storage-pg/test/helpers.js';
import { bearer, httpsCall } from './support/https.js';
import { makeTestPki } from './support/openssl-pki.js';
import { redisSkipReason } from './support/redis.js';
import { type ServerProcess, startServerProcess } from './support/server-process.js';

const SECRET = 'notifications-test-secret-0123456789';
const pki = makeTestPki(['server']);
const ca = readFileSync(pki.ca);

/** A local SMTP server that keeps what it is given. */
async function startMailbox() {
  const received: { to: string[]; raw: string }[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.server.address() as AddressInfo).port,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A port nothing listens on: every SMTP attempt is refused. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

const serverEnv = (smtpPort: number) => ({
  SVC_TLS_CERT_PATH: pki.issued.server!.cert,
  SVC_TLS_KEY_PATH: pki.issued.server!.key,
  SVC_AUTH_SECRET: SECRET,
  SVC_SMTP_HOST: '127.0.0.1',
  SVC_SMTP_PORT: String(smtpPort),
  SVC_SMTP_FROM: 'certwright@example.test',
  SVC_SMTP_REQUIRE_TLS: 'false',
});

async function poll<T>(read: () => Promise<T> | T, done: (value: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * A real change that raises a notification: a certificate is created, issued by the scheduled
 * worker, and revoked, which raises a Revocation email to its owner in the same transaction.
 */
async function revokeACertificate(server: ServerProcess, ownerEmail: string): Promise<string> {
  const call = (method: string, path: string, body?: unknown) =>
    httpsCall(server.port, ca, path, { method, body, headers: bearer(SECRET) });
  const owner = await call('POST', '/api/v1/owners', { name: 'Owner', email: ownerEmail });
  const team = await call('POST', '/api/v1/teams', { name: 'Team' });
  const issuer = await call('POST', '/api/v1/issuers', { name: 'Test Local CA', type: 'Local' });
  const created = await call('POST', '/api/v1/certificates', {
    name: 'notified',
    common_name: 'notified.example.com',
    sans: ['notified.example.com'],
    renewal_policy_id: 'rp-default',
    issuer_id: issuer.json.id,
    owner_id: owner.json.id,
    team_id: team.json.id,
    profile_id: 'prof-default',
  });
  expect(created.status).toBe(201);
  await poll(
    async () => (await call('GET', `/api/v1/certificates/${created.json.id}`)).json.status,
    (status) => status === 'Active',
    'the certificate to be issued',
  );
  const revoked = await call('POST', `/api/v1/certificates/${created.json.id}/revoke`, {
    reason: 'keyCompromise',
  });
  expect(revoked.status).toBe(200);
  return created.json.id as string;
}

const redisSkip = await redisSkipReason();
if (redisSkip) console.warn(`skipping the Redis queue case: ${redisSkip}`);

describe('a notification raised by a change is delivered at once, through the queue', () => {
  let mailbox: Awaited<ReturnType<typeof startMailbox>>;
  beforeAll(async () => {
    mailbox = await startMailbox();
  });
  afterAll(() => mailbox?.close());

  const queues: [string, Record<string, string>][] = [['the SQL queue on embedded PGlite', {}]];
  if (!redisSkip) queues.push(['Redis', { SVC_REDIS_URL: 'redis://127.0.0.1:6379' }]);

  it.each(queues)(
    'through %s, without waiting for the retry sweep',
    async (_name, extra) => {
      const server = await startServerProcess({
        ...serverEnv(mailbox.port),
        // The sweep would run only an hour from now: whatever arrives came through the queue.
        SVC_NOTIFICATION_RETRY_INTERVAL: '1h',
        ...extra,
      });
      try {
        const email = `owner-${randomBytes(4).toString('hex')}@example.test`;
        const certificateId = await revokeACertificate(server, email);
        const mail = await poll(
          () => mailbox.received.find((m) => m.to.includes(email)),
          (m) => m !== undefined,
          'the revocation email',
        );
        expect(mail!.raw).toMatch(/Subject: Certificate notified revoked/);
        const listed = await httpsCall(
          server.port,
          ca,
          `/api/v1/notifications?certificate_id=${certificateId}`,
          { headers: bearer(SECRET) },
        );
        expect(listed.json.data).toEqual([
          expect.objectContaining({ type: 'Revocation', status: 'sent', recipient: email }),
        ]);
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
      }
    },
    180_000,
  );
});

describe('a server without SMTP settings', () => {
  it('stores e-mail notifications as undeliverable, counts them, and warns about no missing channel', async () => {
    const {
      SVC_SMTP_HOST: _h,
      SVC_SMTP_PORT: _p,
      SVC_SMTP_FROM: _f,
      SVC_SMTP_REQUIRE_TLS: _t,
      ...env
    } = serverEnv(0);
    const server = await startServerProcess({ ...env, SVC_NOTIFICATION_RETRY_INTERVAL: '1s' });
    try {
      const certificateId = await revokeACertificate(server, 'nobody-reads@example.test');
      const listed = await httpsCall(
        server.port,
        ca,
        `/api/v1/notifications?certificate_id=${certificateId}`,
        {
          headers: bearer(SECRET),
        },
      );
      expect(listed.json.data).toEqual([
        expect.objectContaining({
          type: 'Revocation',
          channel: 'email',
          status: 'undeliverable',
          sent_at: null,
          last_error:
            "no notification channel 'email' is configured (e-mail needs SVC_SMTP_HOST); not delivered",
        }),
      ]);
      const summary = await httpsCall(server.port, ca, '/api/v1/dashboard/summary', {
        headers: bearer(SECRET),
      });
      expect(summary.json.undeliverable_notifications).toBeGreaterThanOrEqual(1);
      // Retry sweeps ran meanwhile (one a second, issuance took longer): none warned about a channel.
      expect(server.output()).not.toMatch(/notification channel|without delivery/);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  }, 180_000);
});

const postgresSkip = await postgresSkipReason();
if (postgresSkip) console.warn(`skipping the dead-notification metric test: ${postgresSkip}`);

describe.skipIf(postgresSkip !== undefined)('svc_notification_dead_total', () => {
  let database: Awaited<ReturnType<typeof createTempDatabase>>;
  beforeAll(async () => {
    database = await createTempDatabase();
  });
  afterAll(() => database?.drop());

  it('rises on /metrics when a notification exhausts its last attempt', async () => {
    const key = randomBytes(32);
    const server = await startServerProcess({
      ...serverEnv(await closedPort()),
      SVC_DATABASE_URL: database.url,
      SVC_ENCRYPTION_KEY: key.toString('base64'),
      SVC_NOTIFICATION_RETRY_INTERVAL: '1s',
    });
    const metric = async () => {
      const metrics = await httpsCall(server.port, ca, '/metrics', { headers: bearer(SECRET) });
      return Number(/^svc_notification_dead_total (\d+)$/m.exec(metrics.body)?.[1]);
    };
    // An event on its last attempt (four failed before), due now, written by another process
    // sharing the database, as an instance would have left it.
    const storage = createPostgresStorage(database.url, {
      secretBox: new SecretBox(key),
      logger: silentLogger,
    });
    try {
      expect(await metric()).toBe(0);
      const event = await storage.notifications.create({
        type: 'RenewalFailure',
        channel: 'email',
        recipient: 'ops@example.test',
        subject: 'renewal failed',
        message: 'm',
        certificate_id: null,
        status: 'failed',
        retry_count: 4,
        next_retry_at: new Date(Date.now() - 1000),
        created_at: new Date(),
      });
      await poll(metric, (n) => n === 1, 'svc_notification_dead_total to reach 1');
      expect((await storage.notifications.require(event.id)).status).toBe('dead');
    } finally {
      await storage.close();
      server.child.kill('SIGTERM');
      await server.exited;
    }
  }, 180_000);
});
