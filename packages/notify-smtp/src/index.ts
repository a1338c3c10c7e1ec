import { CertwrightError, fail, type NotificationChannel, type NotificationEvent } from '@certwright/core';
import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';

export interface SmtpChannelOptions {
  /** Channel name events refer to; default `email`. */
  name?: string;
  host: string;
  port: number;
  /** Implicit TLS from the first byte (port 465). Otherwise STARTTLS is used when offered. */
  secure?: boolean;
  /** Refuse to send unless the server upgrades with STARTTLS (recommended off loopback). */
  requireTls?: boolean;
  auth?: { user: string; pass: string };
  /** Envelope and header sender, e.g. `certwright <certwright@example.com>`. */
  from: string;
  tls?: { ca?: string | string[]; rejectUnauthorized?: boolean; servername?: string };
  /** Connection, greeting and socket timeouts; default 30 s each. */
  timeoutMs?: number;
}

export interface SmtpChannel extends NotificationChannel {
  /** Closes pooled connections (call on shutdown). */
  close(): void;
}

/**
 * Email delivery over SMTP. The event's `recipient` is one address or a comma-separated list;
 * `subject` and `message` become the subject and the plain-text body. Any refusal (connection,
 * TLS, authentication, a rejected recipient) rejects `send`, which the notification pipeline
 * records as a failed attempt and retries on its schedule.
 *
 * nodemailer rather than a hand-written client: STARTTLS negotiation, SASL mechanisms,
 * dot-stuffing, header encoding of non-ASCII subjects and line-length rules are each small
 * but easy to get subtly wrong, and nodemailer has no runtime dependencies of its own.
 */
export function createSmtpChannel(options: SmtpChannelOptions): SmtpChannel {
  const timeout = options.timeoutMs ?? 30_000;
  const settings: SMTPTransport.Options = {
    host: options.host,
    port: options.port,
    secure: options.secure ?? false,
    requireTLS: options.requireTls ?? false,
    ...(options.auth ? { auth: { user: options.auth.user, pass: options.auth.pass } } : {}),
    ...(options.tls ? { tls: options.tls } : {}),
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
    // nodemailer would otherwise log envelopes (addresses) to the console.
    logger: false,
    debug: false,
  };
  // Not pooled (SMTPTransport, not SMTPPool): one connection per send, since notifications are
  // rare and a pooled connection the server silently dropped would cost a failed attempt.
  const transport = nodemailer.createTransport(settings);
  return {
    name: options.name ?? 'email',
    async send(event: NotificationEvent) {
      const to = event.recipient
        .split(',')
        .map((r) => r.trim())
        .filter(Boolean);
      if (to.length === 0) {
        throw new CertwrightError('bad_request', `notification ${event.id} has no email recipient`);
      }
      const info = await transport
        .sendMail({
          from: options.from,
          to,
          subject: event.subject,
          text: event.message,
          headers: {
            'X-Certwright-Notification-Id': event.id,
            'X-Certwright-Notification-Type': event.type,
          },
        })
        .catch((error: unknown) => {
          throw smtpFailure(error);
        });
      // A server may accept some recipients and refuse others: that is not a delivery.
      if (info.rejected.length > 0) {
        throw new CertwrightError(
          'unavailable',
          `the SMTP server refused ${info.rejected.length} recipient(s)`,
        );
      }
    },
    close() {
      transport.close();
    },
  };
}

/**
 * A failed send as the notification's `last_error` may show it: the SMTP reply code (RFC 5321
 * §4.2.3) and nodemailer's error class (`ECONNECTION`, `EAUTH`, `ETLS` …) say what went wrong;
 * the server's reply text and socket details stay in the cause, which the pipeline logs.
 */
function smtpFailure(error: unknown): CertwrightError {
  const { responseCode, code } = (error ?? {}) as { responseCode?: unknown; code?: unknown };
  const facts = [
    ...(typeof responseCode === 'number' ? [`reply code ${responseCode}`] : []),
    ...(typeof code === 'string' && /^E[A-Z]{2,20}$/.test(code) ? [code] : []),
  ];
  return fail('unavailable', `SMTP delivery failed${facts.length > 0 ? ` (${facts.join(', ')})` : ''}`, {
    cause: error,
  });
}
