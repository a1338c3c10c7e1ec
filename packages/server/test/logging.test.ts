import { createHash, randomBytes } from 'node:crypto';
import {
  type CertificateVersion,
  CertwrightError,
  type DeploymentTargetWithConfig,
  type IssuerWithConfig,
  logAttemptFailure,
  type NewAgent,
  type NewCertificateVersion,
  type WebhookWithHeaders,
} from '@certwright/core';
import { exportPkcs8Pem, generateKeyPair } from '@certwright/core/pki';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';

/** Every secret below is a distinct random string, so finding any of them in a log is a leak. */
const secret = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;

describe('the server logger', () => {
  it('logs every record type without a secret, at any depth, in fields, errors and messages', async () => {
    const leafKeyPem = exportPkcs8Pem((await generateKeyPair('ECDSA-P256')).privateKey);
    const caKeyPem = exportPkcs8Pem((await generateKeyPair('ECDSA-P256')).privateKey);
    const apiKey = `cwa_${randomBytes(24).toString('base64url')}`;
    const secrets = {
      authSecret: secret('auth'),
      encryptionKey: randomBytes(32).toString('base64'),
      dbPassword: secret('dbpw'),
      sslPassword: secret('sslpw'),
      smtpPassword: secret('smtp'),
      targetPassword: secret('target'),
      targetToken: secret('ttoken'),
      webhookAuth: secret('hook'),
      webhookApiKey: secret('hookkey'),
      challengePassword: secret('challenge'),
      clientSecret: secret('client'),
      cookie: secret('cookie'),
      bearer: secret('bearer'),
      keyHash: createHash('sha256').update(apiKey).digest('hex'),
    };
    const databaseUrl = `postgres://app:${secrets.dbPassword}@db.internal:5432/certwright?sslpassword=${secrets.sslPassword}&sslmode=require`;

    const version = {
      id: 'cv-logged',
      serial_number: '01ab',
      private_key_pem: leafKeyPem,
    } satisfies Partial<NewCertificateVersion> & Partial<CertificateVersion>;
    const issuer = {
      id: 'issuer-logged',
      name: 'Local CA',
      type: 'Local',
      config: {
        ca: { issuing_key_pem: caKeyPem, root_key_pem: caKeyPem, cert_pem: '-----BEGIN CERTIFICATE-----' },
        private_key_pem: caKeyPem,
      },
    } satisfies Partial<IssuerWithConfig>;
    // The one answer that carries a root CA key (issuer create with root_private_key 'return').
    const issuerCreated = {
      id: 'issuer-created-logged',
      name: 'Offline root',
      root_private_key_pem: caKeyPem,
    };
    const target = {
      id: 'target-logged',
      type: 'SSH',
      config: {
        host: 'web-1',
        password: secrets.targetPassword,
        api_token: secrets.targetToken,
        key_pem: leafKeyPem,
      },
    } satisfies Partial<DeploymentTargetWithConfig>;
    const webhook = {
      id: 'webhook-logged',
      url: 'https://hooks.example/notify',
      headers: { Authorization: `Bearer ${secrets.webhookAuth}`, 'X-Api-Key': secrets.webhookApiKey },
    } satisfies Partial<WebhookWithHeaders>;
    const agent = { name: 'agent-logged', api_key_hash: secrets.keyHash } satisfies Partial<NewAgent>;
    const enrollment = {
      id: 'enrollment-logged',
      challenge_password: secrets.challengePassword,
      client_secret: secrets.clientSecret,
      api_key: apiKey,
      cookie: secrets.cookie,
      authorization: `Bearer ${secrets.bearer}`,
    };
    const config = parseConfig({
      SVC_TLS_CERT_PATH: '/tls/cert.pem',
      SVC_TLS_KEY_PATH: '/tls/key.pem',
      SVC_AUTH_SECRET: secrets.authSecret,
      SVC_ENCRYPTION_KEY: secrets.encryptionKey,
      SVC_DATABASE_URL: databaseUrl,
      SVC_SMTP_HOST: 'mail.internal',
      SVC_SMTP_FROM: 'certwright@example.com',
      SVC_SMTP_USER: 'mailer',
      SVC_SMTP_PASSWORD: secrets.smtpPassword,
    });
    const urlError = new Error(`connect ECONNREFUSED ${databaseUrl}`);
    const wrapped = new CertwrightError('unavailable', 'database unreachable', { cause: urlError });
    const records = { version, issuer, issuerCreated, target, webhook, agent, enrollment, config };

    let output = '';
    const logger = createLogger('debug', {
      write(line: string) {
        output += line;
      },
    });
    for (const [name, record] of Object.entries(records)) {
      logger.info({ ...record }, `${name} at the top level`);
      logger.info({ [name]: record }, `${name} one level down`);
      logger.warn({ context: { batch: [{ item: { record } }] } }, `${name} deep in an array`);
      logger.child({ bound: record }).debug({}, `${name} as a child binding`);
    }
    logger.error({ err: urlError }, 'an error carrying a URL');
    logger.error({ err: wrapped, request_id: 'req-1' }, 'a wrapped error');
    logger.error({ error: { message: `opening ${databaseUrl} failed` } }, `message with ${databaseUrl}`);
    logger.info({ pem: leafKeyPem }, `a key in a message: ${leafKeyPem}`);

    const lines = output.trim().split('\n');
    expect(lines.length).toBe(Object.keys(records).length * 4 + 4);
    for (const [name, value] of Object.entries(secrets)) expect(output, name).not.toContain(value);
    expect(output).not.toContain(apiKey);
    expect(output).not.toMatch(/PRIVATE KEY-----\s*MI/);
    for (const pem of [leafKeyPem, caKeyPem]) expect(output).not.toContain(pem.split('\n')[1]);

    // What is not secret stays readable: redaction must not blank the logs.
    for (const id of [
      'cv-logged',
      'issuer-logged',
      'issuer-created-logged',
      'target-logged',
      'webhook-logged',
      'agent-logged',
      'web-1',
    ]) {
      expect(output).toContain(id);
    }
    expect(output).toContain(
      'postgres://app:***@db.internal:5432/certwright?sslpassword=***&sslmode=require',
    );
    expect(output).toContain('/tls/cert.pem');
    const wrappedLine = JSON.parse(lines.find((l) => l.includes('a wrapped error'))!);
    expect(wrappedLine.err).toMatchObject({
      type: 'CertwrightError',
      code: 'unavailable',
      message: 'database unreachable',
    });
    expect(wrappedLine.err.cause.message).toMatch(
      /^connect ECONNREFUSED postgres:\/\/app:\*\*\*@db\.internal/,
    );
  });

  it('logs an operational failure as one line without its stack, except at debug; a bug keeps its stack', () => {
    const capture = (level: string) => {
      let output = '';
      const logger = createLogger(level, {
        write(line: string) {
          output += line;
        },
      });
      const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
      logger.warn({ err: refused, attempt: 2 }, 'webhook delivery failed');
      logger.warn({ err: new CertwrightError('unavailable', 'the database is unavailable') }, 'retrying');
      logger.error({ err: new TypeError('x is undefined') }, 'request failed');
      return output
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { err: { message: string; stack?: string } });
    };
    const info = capture('info');
    expect(info.map((line) => line.err.stack === undefined)).toEqual([true, true, false]);
    expect(info[0]!.err.message).toBe('connect ECONNREFUSED 127.0.0.1:9');
    expect(info[2]!.err.stack).toContain('TypeError: x is undefined');
    expect(capture('debug').map((line) => line.err.stack === undefined)).toEqual([false, false, false]);
  });

  it('logs each failed attempt of a job or delivery as one line with attempt and next retry, no stack and no secret', () => {
    const password = secret('dbpw');
    const token = secret('bearer');
    const capture = (level: string) => {
      let output = '';
      const logger = createLogger(level, {
        write(line: string) {
          output += line;
        },
      });
      // A failure whose message and cause carry a credential, as a driver or receiver may echo.
      const cause = Object.assign(
        new Error(`connect ECONNREFUSED for postgres://app:${password}@127.0.0.1:9/db`),
        {
          code: 'ECONNREFUSED',
        },
      );
      const failure = new CertwrightError('unavailable', `receiver refused Authorization: Bearer ${token}`, {
        cause,
      });
      const nextRetryAt = new Date('2026-12-03T15:00:00.000Z');
      for (const attempt of [1, 2, 3]) {
        logAttemptFailure(logger, {
          message: 'notification delivery failed',
          attempt,
          maxAttempts: 5,
          nextRetryAt,
          error: failure,
          fields: { notification_id: 'ntf-1', channel: 'webhook:wh-1' },
        });
      }
      // A bug is summarized the same way: the stack is for debug.
      logAttemptFailure(logger, {
        message: 'job is dead after its last attempt',
        level: 'error',
        attempt: 5,
        nextRetryAt: null,
        error: new TypeError('x is undefined'),
        fields: { job_id: 'job-1', outcome: 'dead' },
      });
      return {
        output,
        lines: output
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line)),
      };
    };
    const info = capture('info');
    expect(info.lines).toHaveLength(4);
    expect(info.lines.map((line) => [line.msg, line.attempt, line.next_retry_at])).toEqual([
      ['notification delivery failed', 1, '2026-12-03T15:00:00.000Z'],
      ['notification delivery failed', 2, '2026-12-03T15:00:00.000Z'],
      ['notification delivery failed', 3, '2026-12-03T15:00:00.000Z'],
      ['job is dead after its last attempt', 5, null],
    ]);
    expect(info.lines[0]).toMatchObject({
      level: 40,
      max_attempts: 5,
      notification_id: 'ntf-1',
      error: { type: 'CertwrightError', code: 'unavailable' },
    });
    expect(info.lines[0].error.message).toContain('ECONNREFUSED');
    expect(info.lines[3]).toMatchObject({
      level: 50,
      error: { type: 'TypeError', message: 'x is undefined' },
    });
    expect(info.output).not.toMatch(/\n\s+at /);
    expect(info.output).not.toContain('"stack"');
    const debug = capture('debug');
    // At debug each attempt adds its details line, stack included.
    expect(debug.lines).toHaveLength(8);
    expect(debug.output).toContain('"stack"');
    for (const { output } of [info, debug]) {
      expect(output).not.toContain(password);
      expect(output).not.toContain(token);
    }
  });
});
