import type { AddressInfo } from 'node:net';
import type { NotificationEvent } from '@certwright/core';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSmtpChannel } from '../src/index.js';

interface Received {
  from: string;
  to: string[];
  raw: string;
}

const received: Received[] = [];
let refuse = false;
let server: SMTPServer;
let port: number;

beforeAll(async () => {
  server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === 'mailer' && auth.password === 'correct horse')
        return callback(null, { user: 'mailer' });
      return callback(new Error('bad credentials'));
    },
    onRcptTo(address, _session, callback) {
      if (refuse || address.address.endsWith('@refused.test')) {
        const error = Object.assign(new Error('mailbox unavailable'), { responseCode: 550 });
        return callback(error);
      }
      return callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const event = (overrides: Partial<NotificationEvent> = {}): NotificationEvent => ({
  id: 'ntf-1',
  type: 'ExpirationWarning',
  channel: 'email',
  recipient: 'ops@example.test',
  subject: 'Certificate www.example.test expires in 7 days — renew',
  message: 'The certificate expires on 2026-03-08.\n.\nA line with only a dot above.',
  certificate_id: null,
  status: 'pending',
  retry_count: 0,
  next_retry_at: null,
  last_error: null,
  sent_at: null,
  created_at: new Date('2026-03-01T00:00:00Z'),
  updated_at: new Date('2026-03-01T00:00:00Z'),
  ...overrides,
});

describe('SMTP channel against a real SMTP server on loopback', () => {
  it('delivers subject, body and ids to every recipient', async () => {
    const channel = createSmtpChannel({ host: '127.0.0.1', port, from: 'certwright@example.test' });
    expect(channel.name).toBe('email');
    received.length = 0;
    await channel.send(event({ recipient: 'ops@example.test, sec@example.test' }));
    expect(received).toHaveLength(1);
    const mail = received[0] as Received;
    expect(mail.from).toBe('certwright@example.test');
    expect(mail.to).toEqual(['ops@example.test', 'sec@example.test']);
    expect(mail.raw).toMatch(/^X-Certwright-Notification-ID: ntf-1\r$/im);
    expect(mail.raw).toContain('X-Certwright-Notification-Type: ExpirationWarning');
    // The non-ASCII subject is MIME-encoded and the lone dot line is dot-stuffed on the wire
    // (the server un-stuffs it), so the body arrives intact.
    expect(mail.raw).toMatch(/Subject: =\?UTF-8\?/);
    expect(mail.raw).toContain('2026-03-08.\r\n.\r\nA line with only a dot above.');
    channel.close();
  });

  it('authenticates when credentials are given and fails on wrong ones', async () => {
    received.length = 0;
    const good = createSmtpChannel({
      name: 'email-auth',
      host: '127.0.0.1',
      port,
      from: 'certwright@example.test',
      auth: { user: 'mailer', pass: 'correct horse' },
    });
    await good.send(event());
    expect(received).toHaveLength(1);
    const bad = createSmtpChannel({
      host: '127.0.0.1',
      port,
      from: 'c@example.test',
      auth: { user: 'mailer', pass: 'nope' },
    });
    // Shown to API users as the notification's last_error: the class of failure, no server text.
    await expect(bad.send(event())).rejects.toThrow(/^SMTP delivery failed \(.*EAUTH\)$/);
  });

  it('rejects when the server refuses a recipient, even if it accepts another', async () => {
    const channel = createSmtpChannel({ host: '127.0.0.1', port, from: 'certwright@example.test' });
    await expect(channel.send(event({ recipient: 'someone@refused.test' }))).rejects.toMatchObject({
      name: 'CertwrightError',
      code: 'unavailable',
      message: expect.stringMatching(/^SMTP delivery failed \(reply code 550/),
    });
    await expect(channel.send(event({ recipient: 'ok@example.test, someone@refused.test' }))).rejects.toThrow(
      /refused/,
    );
  });

  it('rejects an event without a recipient and a server that is not there', async () => {
    const channel = createSmtpChannel({ host: '127.0.0.1', port, from: 'certwright@example.test' });
    await expect(channel.send(event({ recipient: ' , ' }))).rejects.toThrow(/no email recipient/);
    const closed = createSmtpChannel({ host: '127.0.0.1', port: 1, from: 'c@example.test', timeoutMs: 2000 });
    const unreachable = await closed.send(event()).catch((error: unknown) => error);
    expect(unreachable).toMatchObject({
      code: 'unavailable',
      message: expect.stringMatching(/^SMTP delivery failed/),
    });
    expect((unreachable as Error).message).not.toMatch(/127\.0\.0\.1|:1\b/);
  });

  it('can be switched to refuse everything (used by the retry tests)', async () => {
    refuse = true;
    const channel = createSmtpChannel({ host: '127.0.0.1', port, from: 'certwright@example.test' });
    await expect(channel.send(event())).rejects.toThrow();
    refuse = false;
    await channel.send(event());
  });
});
