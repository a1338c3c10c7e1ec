import { describe, expect, it } from 'vitest';
import { JWT_REFUSED_MESSAGE, parseConfig, parseDuration, redactUrl } from './config.js';
import { isCertwrightError } from './errors.js';

const base = {
  SVC_TLS_CERT_PATH: '/c.pem',
  SVC_TLS_KEY_PATH: '/k.pem',
  SVC_AUTH_SECRET: 'a-secret-of-16-chars',
};

function failure(env: Record<string, string>): string {
  try {
    parseConfig(env);
  } catch (error) {
    expect(isCertwrightError(error) && error.code).toBe('config_invalid');
    return (error as Error).message;
  }
  throw new Error('expected parseConfig to fail');
}

describe('parseConfig', () => {
  it('applies the documented defaults and freezes the result', () => {
    const config = parseConfig(base);
    expect(config).toMatchObject({
      port: 8443,
      listenAddr: '0.0.0.0',
      auth: { type: 'api-key', secret: base.SVC_AUTH_SECRET },
      dataDir: './data',
      databaseUrl: undefined,
      notificationRetryIntervalMs: 120_000,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('refuses jwt with the gateway advice and other auth types by name', () => {
    expect(failure({ ...base, SVC_AUTH_TYPE: 'jwt' })).toBe(JWT_REFUSED_MESSAGE);
    expect(failure({ ...base, SVC_AUTH_TYPE: 'basic' })).toMatch(/SVC_AUTH_TYPE='basic' is not supported/);
    expect(parseConfig({ ...base, SVC_AUTH_TYPE: 'none', SVC_AUTH_SECRET: '' }).auth).toEqual({
      type: 'none',
    });
  });

  it('names every missing or invalid variable', () => {
    const message = failure({
      SVC_PORT: '70000',
      SVC_DATABASE_URL: 'sqlite://x',
      SVC_NOTIFICATION_RETRY_INTERVAL: 'soon',
    });
    for (const name of [
      'SVC_PORT',
      'SVC_DATABASE_URL',
      'SVC_NOTIFICATION_RETRY_INTERVAL',
      'SVC_TLS_CERT_PATH',
      'SVC_TLS_KEY_PATH',
      'SVC_AUTH_SECRET',
    ]) {
      expect(message).toContain(name);
    }
    expect(failure({ ...base, SVC_AUTH_SECRET: 'short' })).toMatch(/SVC_AUTH_SECRET: must be at least 16/);
  });

  it('decodes a 32-byte encryption key and refuses any other length', () => {
    const hex = 'ab'.repeat(32);
    expect(parseConfig({ ...base, SVC_ENCRYPTION_KEY: hex }).encryptionKey).toEqual(
      new Uint8Array(32).fill(0xab),
    );
    const b64 = Buffer.alloc(32, 7).toString('base64');
    expect(parseConfig({ ...base, SVC_ENCRYPTION_KEY: b64 }).encryptionKey).toEqual(
      new Uint8Array(32).fill(7),
    );
    expect(failure({ ...base, SVC_ENCRYPTION_KEY: 'abcd' })).toMatch(/SVC_ENCRYPTION_KEY: must be 32 bytes/);
  });

  it('takes the external base URL as an https origin', () => {
    expect(parseConfig(base).baseUrl).toBeUndefined();
    expect(parseConfig({ ...base, SVC_BASE_URL: 'https://pki.example.com/' }).baseUrl).toBe(
      'https://pki.example.com',
    );
    expect(failure({ ...base, SVC_BASE_URL: 'http://pki.example.com' })).toMatch(
      /SVC_BASE_URL: must be an https/,
    );
  });

  it('configures SMTP only when a host is given, and then requires a sender', () => {
    expect(parseConfig(base).smtp).toBeUndefined();
    expect(parseConfig({ ...base, SVC_SMTP_HOST: 'mail', SVC_SMTP_FROM: 'cw@example.com' }).smtp).toEqual({
      host: 'mail',
      port: 587,
      from: 'cw@example.com',
      secure: false,
      requireTls: true,
      auth: undefined,
    });
    expect(failure({ ...base, SVC_SMTP_HOST: 'mail' })).toMatch(/SVC_SMTP_FROM is required/);
    expect(failure({ ...base, SVC_SMTP_HOST: 'mail', SVC_SMTP_FROM: 'a@b', SVC_SMTP_USER: 'u' })).toMatch(
      /SVC_SMTP_PASSWORD is required/,
    );
  });

  it('accepts the three database URL schemes', () => {
    for (const url of ['postgres://h/db', 'postgresql://h/db', 'mysql://root@h/db']) {
      expect(parseConfig({ ...base, SVC_DATABASE_URL: url }).databaseUrl).toBe(url);
    }
  });
});

describe('helpers', () => {
  it('parses Go-style durations', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('2m')).toBe(120_000);
    expect(parseDuration('1.5h')).toBe(5_400_000);
    expect(() => parseDuration('2 minutes')).toThrow(/not a duration/);
  });

  it('hides passwords in connection URLs', () => {
    expect(redactUrl('postgres://app:hunter2@db:5432/x')).toBe('postgres://app:***@db:5432/x');
    expect(redactUrl('not a url')).not.toContain('not a url');
  });
});
