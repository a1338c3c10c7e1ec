import { randomBytes } from 'node:crypto';
import { isCertwrightError } from '@certwright/core';
import { describe, expect, it } from 'vitest';
import { estimateEntropyBits, JWT_REFUSED_MESSAGE, parseConfig, parseDuration } from './config.js';

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
    expect(() => {
      (config.rateLimits as { pki: number }).pki = 0;
    }).toThrow(TypeError);
    expect(config.rateLimits.pki).toBe(200);
  });

  it('is frozen all the way down: no nested setting and not the key can be changed', () => {
    const key = randomBytes(32);
    const config = parseConfig({
      ...base,
      SVC_ENCRYPTION_KEY: key.toString('base64'),
      SVC_SMTP_HOST: 'mail',
      SVC_SMTP_FROM: 'cw@example.com',
      SVC_SMTP_USER: 'u',
      SVC_SMTP_PASSWORD: 'p',
    });
    const nested: object[] = [
      config,
      config.tls,
      config.auth,
      config.agents,
      config.smtp!,
      config.smtp!.auth!,
      config.rateLimits,
    ];
    for (const object of nested) expect(Object.isFrozen(object)).toBe(true);
    // Nested members can be neither added nor removed, only read.
    expect(() => {
      (config.tls as { extra?: string }).extra = 'x';
    }).toThrow(TypeError);
    expect(() => {
      delete (config.smtp as { auth?: unknown }).auth;
    }).toThrow(TypeError);
    expect(config.smtp!.auth).toEqual({ user: 'u', pass: 'p' });
    expect(() => {
      (config.tls as { certPath: string }).certPath = '/elsewhere.pem';
    }).toThrow(TypeError);
    expect(() => {
      (config.agents as { jobLeaseMs: number }).jobLeaseMs = 1;
    }).toThrow(TypeError);
    expect(() => {
      (config.smtp!.auth as { pass: string }).pass = 'changed';
    }).toThrow(TypeError);
    // The key's bytes are handed out as a copy: writing into it changes nothing.
    config.encryptionKey!.fill(0);
    expect(Buffer.from(config.encryptionKey!).equals(key)).toBe(true);
    expect(config.tls.certPath).toBe('/c.pem');
  });

  it('refuses jwt with the gateway advice and other auth types by name', () => {
    expect(failure({ ...base, SVC_AUTH_TYPE: 'jwt' })).toBe(JWT_REFUSED_MESSAGE);
    expect(failure({ ...base, SVC_AUTH_TYPE: 'basic' })).toMatch(/SVC_AUTH_TYPE='basic' is not supported/);
    expect(parseConfig({ ...base, SVC_AUTH_TYPE: 'none', SVC_AUTH_SECRET: '' }).auth).toEqual({
      type: 'none',
    });
    const { SVC_AUTH_SECRET: _, ...withoutSecret } = base;
    expect(failure({ ...withoutSecret, SVC_AUTH_TYPE: 'api-key' })).toMatch(/SVC_AUTH_SECRET/);
  });

  it('runs one listener process by default and refuses several without shared storage and Redis', () => {
    expect(parseConfig(base).serverWorkers).toBe(1);
    const shared = {
      ...base,
      SVC_SERVER_WORKERS: '2',
      SVC_DATABASE_URL: 'postgres://db/certwright',
      SVC_REDIS_URL: 'redis://cache:6379',
    };
    expect(parseConfig(shared).serverWorkers).toBe(2);
    const { SVC_DATABASE_URL: _db, ...pglite } = shared;
    expect(failure(pglite)).toMatch(/SVC_SERVER_WORKERS=2 needs shared storage: set SVC_DATABASE_URL/);
    const { SVC_REDIS_URL: _redis, ...noRedis } = shared;
    expect(failure(noRedis)).toMatch(/SVC_SERVER_WORKERS=2 needs SVC_REDIS_URL/);
    expect(failure({ ...shared, SVC_SERVER_WORKERS: '0' })).toMatch(/SVC_SERVER_WORKERS/);
    expect(failure({ ...shared, SVC_SERVER_WORKERS: 'many' })).toMatch(/SVC_SERVER_WORKERS/);
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
    const key = randomBytes(32);
    expect(parseConfig({ ...base, SVC_ENCRYPTION_KEY: key.toString('hex') }).encryptionKey).toEqual(
      new Uint8Array(key),
    );
    expect(parseConfig({ ...base, SVC_ENCRYPTION_KEY: key.toString('base64') }).encryptionKey).toEqual(
      new Uint8Array(key),
    );
    expect(parseConfig({ ...base, SVC_ENCRYPTION_KEY: key.toString('base64url') }).encryptionKey).toEqual(
      new Uint8Array(key),
    );
    expect(failure({ ...base, SVC_ENCRYPTION_KEY: 'abcd' })).toMatch(/SVC_ENCRYPTION_KEY: must be 32 bytes/);
  });

  it('reads previous encryption keys as a comma-separated list, each checked like the current key', () => {
    const current = randomBytes(32);
    const [a, b] = [randomBytes(32), randomBytes(32)];
    const config = parseConfig({
      ...base,
      SVC_ENCRYPTION_KEY: current.toString('base64'),
      SVC_ENCRYPTION_KEY_PREVIOUS: `${a.toString('hex')},${b.toString('base64')}`,
    });
    expect(config.encryptionKeyPrevious).toEqual([new Uint8Array(a), new Uint8Array(b)]);
    // Handed out as copies: changing one changes nothing the process keeps.
    config.encryptionKeyPrevious[0]!.fill(0);
    expect(Buffer.from(config.encryptionKeyPrevious[0]!).equals(a)).toBe(true);
    expect(parseConfig(base).encryptionKeyPrevious).toEqual([]);
    expect(
      failure({
        ...base,
        SVC_ENCRYPTION_KEY: current.toString('hex'),
        SVC_ENCRYPTION_KEY_PREVIOUS: `${a.toString('hex')},abcd`,
      }),
    ).toMatch(/SVC_ENCRYPTION_KEY_PREVIOUS: key 2: must be 32 bytes/);
    expect(failure({ ...base, SVC_ENCRYPTION_KEY_PREVIOUS: a.toString('hex') })).toMatch(
      /SVC_ENCRYPTION_KEY_PREVIOUS needs SVC_ENCRYPTION_KEY/,
    );
  });

  it('refuses low-entropy keys and secrets at start-up, naming the variable', () => {
    for (const weak of [
      'ab'.repeat(32), // one repeated byte
      Buffer.alloc(32, 7).toString('base64'),
      '0102'.repeat(16), // two byte values
      Buffer.from('my-own-secret-key-for-certwright').toString('base64'), // 32 ASCII bytes
    ]) {
      expect(failure({ ...base, SVC_ENCRYPTION_KEY: weak }), weak).toMatch(
        /SVC_ENCRYPTION_KEY: has too little entropy \(about \d+ bits estimated, at least 128 needed\)/,
      );
    }
    for (const weak of ['a'.repeat(40), 'ab'.repeat(20), '0101010101010101', 'passwordpassword']) {
      expect(failure({ ...base, SVC_AUTH_SECRET: weak }), weak).toMatch(
        /SVC_AUTH_SECRET: has too little entropy .*at least 64 needed/,
      );
    }
    expect(parseConfig({ ...base, SVC_AUTH_SECRET: randomBytes(24).toString('base64url') }).auth.type).toBe(
      'api-key',
    );
  });

  it('estimates entropy from symbol frequencies', () => {
    expect(estimateEntropyBits('aaaaaaaa')).toBe(0);
    expect(estimateEntropyBits('abababab')).toBe(8);
    expect(estimateEntropyBits(new Uint8Array([0, 1, 2, 3]))).toBe(8);
    expect(estimateEntropyBits(randomBytes(32))).toBeGreaterThan(128);
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

  it('configures PKCS#11 key custody only with a module, then requires a token label and a PIN, never echoing the PIN', () => {
    expect(parseConfig(base).pkcs11).toBeUndefined();
    const module = { SVC_PKCS11_MODULE: '/usr/lib/softhsm/libsofthsm2.so' };
    expect(
      parseConfig({ ...base, ...module, SVC_PKCS11_TOKEN_LABEL: 'ca', SVC_PKCS11_PIN_FILE: '/run/pin' })
        .pkcs11,
    ).toEqual({ module: module.SVC_PKCS11_MODULE, tokenLabel: 'ca', pinFile: '/run/pin', pin: undefined });
    expect(failure({ ...base, ...module, SVC_PKCS11_PIN: '1234' })).toMatch(
      /SVC_PKCS11_TOKEN_LABEL is required/,
    );
    const noPin = failure({ ...base, ...module, SVC_PKCS11_TOKEN_LABEL: 'ca' });
    expect(noPin).toMatch(/SVC_PKCS11_PIN_FILE or SVC_PKCS11_PIN is required/);
    const badLabel = failure({
      ...base,
      ...module,
      SVC_PKCS11_TOKEN_LABEL: 'x'.repeat(33),
      SVC_PKCS11_PIN: '97531',
    });
    expect(badLabel).toMatch(/SVC_PKCS11_TOKEN_LABEL/);
    expect(badLabel).not.toContain('97531');
  });

  it('reads the per-client rate limits — 20 a second per endpoint and per ACME account by default — 0 switching one off, and refuses a window under 1s', () => {
    expect(parseConfig(base).rateLimits).toEqual({
      windowMs: 10_000,
      public: 200,
      pki: 200,
      enrollment: 200,
      acmeAccount: 200,
      authFailures: 10,
      authFailureWindowMs: 300_000,
    });
    const tuned = parseConfig({ ...base, SVC_RATE_LIMIT_PKI: '0', SVC_AUTH_FAILURE_WINDOW: '1h' });
    expect(tuned.rateLimits).toMatchObject({ pki: 0, authFailureWindowMs: 3_600_000 });
    expect(failure({ ...base, SVC_RATE_LIMIT_WINDOW: '500ms' })).toMatch(
      /SVC_RATE_LIMIT_WINDOW: must be at least 1s/,
    );
    expect(failure({ ...base, SVC_RATE_LIMIT_ENROLLMENT: '-1' })).toContain('SVC_RATE_LIMIT_ENROLLMENT');
    expect(failure({ ...base, SVC_AUTH_FAILURE_LIMIT: 'many' })).toContain('SVC_AUTH_FAILURE_LIMIT');
  });

  it('caps concurrent connections per client at 128 unless SVC_MAX_CONNECTIONS_PER_CLIENT says otherwise', () => {
    expect(parseConfig(base).maxConnectionsPerClient).toBe(128);
    expect(parseConfig({ ...base, SVC_MAX_CONNECTIONS_PER_CLIENT: '0' }).maxConnectionsPerClient).toBe(0);
    expect(failure({ ...base, SVC_MAX_CONNECTIONS_PER_CLIENT: '-3' })).toContain(
      'SVC_MAX_CONNECTIONS_PER_CLIENT',
    );
  });

  it('reads the ACME server settings: default profile prof-default, renewal information on every 6h', () => {
    expect(parseConfig(base).acmeServer).toEqual({
      defaultProfileId: 'prof-default',
      ariEnabled: true,
      ariPollIntervalMs: 6 * 3_600_000,
    });
    const tuned = parseConfig({
      ...base,
      SVC_ACME_SERVER_DEFAULT_PROFILE_ID: 'prof-acme',
      SVC_ACME_SERVER_ARI_ENABLED: 'false',
      SVC_ACME_SERVER_ARI_POLL_INTERVAL: '30m',
    });
    expect(tuned.acmeServer).toEqual({
      defaultProfileId: 'prof-acme',
      ariEnabled: false,
      ariPollIntervalMs: 1_800_000,
    });
    expect(failure({ ...base, SVC_ACME_SERVER_DEFAULT_PROFILE_ID: 'a/b' })).toContain(
      'SVC_ACME_SERVER_DEFAULT_PROFILE_ID',
    );
    expect(failure({ ...base, SVC_ACME_SERVER_ARI_ENABLED: 'yes' })).toContain('SVC_ACME_SERVER_ARI_ENABLED');
  });

  it('reads the SCEP default profile: prof-default unless SVC_SCEP_DEFAULT_PROFILE_ID names another', () => {
    expect(parseConfig(base).scep).toEqual({
      defaultProfileId: 'prof-default',
      rateLimit: { limit: 60, windowMs: 60_000 },
    });
    expect(parseConfig({ ...base, SVC_SCEP_DEFAULT_PROFILE_ID: 'prof-mdm' }).scep).toMatchObject({
      defaultProfileId: 'prof-mdm',
    });
    // Per credential and profile; 0 switches it off.
    expect(parseConfig({ ...base, SVC_SCEP_RATE_LIMIT: '0' }).scep.rateLimit).toBeNull();
    expect(
      parseConfig({ ...base, SVC_SCEP_RATE_LIMIT: '5', SVC_SCEP_RATE_LIMIT_WINDOW: '10s' }).scep.rateLimit,
    ).toEqual({
      limit: 5,
      windowMs: 10_000,
    });
    expect(failure({ ...base, SVC_SCEP_RATE_LIMIT_WINDOW: '10ms' })).toContain('SVC_SCEP_RATE_LIMIT_WINDOW');
    expect(failure({ ...base, SVC_SCEP_DEFAULT_PROFILE_ID: 'a/b' })).toContain('SVC_SCEP_DEFAULT_PROFILE_ID');
  });

  it('reads the ACME validation pools, ports, resolvers and ranges', () => {
    expect(parseConfig(base)).toMatchObject({
      acmeValidation: {
        concurrency: { http01: 10, dns01: 10, tlsAlpn01: 10 },
        httpPort: 80,
        tlsAlpnPort: 443,
        dns01Resolver: '8.8.8.8:53',
        validationResolver: undefined,
        allowedRanges: [],
      },
    });
    const config = parseConfig({
      ...base,
      SVC_ACME_SERVER_DNS01_CONCURRENCY: '2',
      SVC_ACME_SERVER_HTTP01_PORT: '5002',
      SVC_ACME_SERVER_VALIDATION_RESOLVER: '127.0.0.1:5353',
      SVC_ACME_SERVER_VALIDATION_ALLOWED_RANGES: '127.0.0.1, 10.0.0.0/8',
    });
    expect(config.acmeValidation).toMatchObject({
      concurrency: { dns01: 2 },
      httpPort: 5002,
      validationResolver: '127.0.0.1:5353',
      allowedRanges: ['127.0.0.1/32', '10.0.0.0/8'],
    });
    const message = failure({
      ...base,
      SVC_ACME_SERVER_TLSALPN01_CONCURRENCY: '0',
      SVC_ACME_SERVER_DNS01_RESOLVER: 'dns.google',
      SVC_ACME_SERVER_VALIDATION_ALLOWED_RANGES: '10.0.0.0/33',
    });
    expect(message).toMatch(/SVC_ACME_SERVER_TLSALPN01_CONCURRENCY/);
    expect(message).toMatch(/SVC_ACME_SERVER_DNS01_RESOLVER/);
    expect(message).toMatch(/SVC_ACME_SERVER_VALIDATION_ALLOWED_RANGES: '10.0.0.0\/33'/);
  });

  it('reads the SCEP probe ranges and refuses loopback entries, naming the variable', () => {
    expect(parseConfig(base).scepProbe).toEqual({ allowedRanges: [] });
    expect(
      parseConfig({ ...base, SVC_SCEP_PROBE_ALLOWED_RANGES: '10.20.0.0/16, 192.168.1.20' }).scepProbe,
    ).toEqual({ allowedRanges: ['10.20.0.0/16', '192.168.1.20/32'] });
    for (const loopback of ['127.0.0.1', '10.0.0.0/8, 127.0.0.0/8', '::1']) {
      expect(failure({ ...base, SVC_SCEP_PROBE_ALLOWED_RANGES: loopback })).toMatch(
        /SVC_SCEP_PROBE_ALLOWED_RANGES: loopback entries .* are not allowed/,
      );
    }
    expect(failure({ ...base, SVC_SCEP_PROBE_ALLOWED_RANGES: 'intranet' })).toMatch(
      /SVC_SCEP_PROBE_ALLOWED_RANGES/,
    );
  });

  it('reads the session lifetimes, binding and sweep, and the bootstrap administrator', () => {
    const defaults = parseConfig(base);
    expect(defaults.sessions).toEqual({
      idleTimeoutMs: 30 * 60_000,
      absoluteTimeoutMs: 12 * 3_600_000,
      bindUserAgent: true,
      gcIntervalMs: 15 * 60_000,
    });
    expect(defaults.bootstrapAdmin).toBeUndefined();
    expect(defaults.demo).toEqual({ seed: false, modeAck: false });
    expect(failure({ ...base, SVC_DEMO_SEED: 'true' })).toMatch(/SVC_DEMO_MODE_ACK/);
    expect(parseConfig({ ...base, SVC_DEMO_SEED: 'true', SVC_DEMO_MODE_ACK: 'true' }).demo).toEqual({
      seed: true,
      modeAck: true,
    });
    expect(defaults.breakglass).toEqual({ enabled: false, lockoutThreshold: 5, lockoutMs: 15 * 60_000 });
    expect(
      parseConfig({ ...base, SVC_BREAKGLASS_ENABLED: 'true', SVC_BREAKGLASS_LOCKOUT_THRESHOLD: '3' })
        .breakglass,
    ).toEqual({ enabled: true, lockoutThreshold: 3, lockoutMs: 15 * 60_000 });
    expect(failure({ ...base, SVC_BREAKGLASS_LOCKOUT_THRESHOLD: '0' })).toMatch(
      /SVC_BREAKGLASS_LOCKOUT_THRESHOLD/,
    );
    expect(defaults.oidc).toEqual({
      preloginRequireUa: true,
      preloginRequireIp: false,
      bclMaxAgeSeconds: 300,
    });
    expect(
      parseConfig({ ...base, SVC_OIDC_PRELOGIN_REQUIRE_IP: 'true', SVC_OIDC_BCL_MAX_AGE_SECONDS: '60' }).oidc,
    ).toEqual({ preloginRequireUa: true, preloginRequireIp: true, bclMaxAgeSeconds: 60 });
    expect(failure({ ...base, SVC_OIDC_BCL_MAX_AGE_SECONDS: '0' })).toMatch(/SVC_OIDC_BCL_MAX_AGE_SECONDS/);
    expect(
      parseConfig({ ...base, SVC_OIDC_CA_BUNDLE_PATH: '/etc/certwright/idp-ca.pem' }).oidc.caBundlePath,
    ).toBe('/etc/certwright/idp-ca.pem');
    const set = parseConfig({
      ...base,
      SVC_SESSION_IDLE_TIMEOUT: '10m',
      SVC_SESSION_ABSOLUTE_TIMEOUT: '1h',
      SVC_SESSION_BIND_USER_AGENT: 'false',
      SVC_SESSION_GC_INTERVAL: '1m',
      SVC_BOOTSTRAP_ADMIN_SUBJECT: 'a1b2c3',
      SVC_BOOTSTRAP_ADMIN_PROVIDER_ID: 'corp',
      SVC_BOOTSTRAP_ADMIN_EMAIL: 'admin@example.test',
    });
    expect(set.sessions).toEqual({
      idleTimeoutMs: 600_000,
      absoluteTimeoutMs: 3_600_000,
      bindUserAgent: false,
      gcIntervalMs: 60_000,
    });
    expect(set.bootstrapAdmin).toEqual({
      subject: 'a1b2c3',
      providerId: 'corp',
      email: 'admin@example.test',
    });
    expect(failure({ ...base, SVC_SESSION_IDLE_TIMEOUT: '2h', SVC_SESSION_ABSOLUTE_TIMEOUT: '1h' })).toMatch(
      /SVC_SESSION_ABSOLUTE_TIMEOUT/,
    );
    expect(failure({ ...base, SVC_SESSION_GC_INTERVAL: '10ms' })).toMatch(
      /SVC_SESSION_GC_INTERVAL: must be at least 1s/,
    );
    expect(failure({ ...base, SVC_SESSION_BIND_USER_AGENT: 'maybe' })).toMatch(/SVC_SESSION_BIND_USER_AGENT/);
    expect(failure({ ...base, SVC_BOOTSTRAP_ADMIN_SUBJECT: 'x', SVC_BOOTSTRAP_ADMIN_EMAIL: 'nope' })).toMatch(
      /SVC_BOOTSTRAP_ADMIN_EMAIL/,
    );
  });

  it('binds to SVC_BIND_ADDRESS, default 0.0.0.0; SVC_LISTEN_ADDR is its accepted older name', () => {
    expect(parseConfig(base).listenAddr).toBe('0.0.0.0');
    expect(parseConfig({ ...base, SVC_BIND_ADDRESS: '127.0.0.1' }).listenAddr).toBe('127.0.0.1');
    expect(parseConfig({ ...base, SVC_BIND_ADDRESS: '::1' }).listenAddr).toBe('::1');
    expect(parseConfig({ ...base, SVC_BIND_ADDRESS: '[::1]' }).listenAddr).toBe('::1');
    expect(parseConfig({ ...base, SVC_LISTEN_ADDR: '127.0.0.2' }).listenAddr).toBe('127.0.0.2');
    expect(
      parseConfig({ ...base, SVC_BIND_ADDRESS: '127.0.0.1', SVC_LISTEN_ADDR: '127.0.0.1' }).listenAddr,
    ).toBe('127.0.0.1');
    // An empty value is unset, as for every variable.
    expect(parseConfig({ ...base, SVC_BIND_ADDRESS: '', SVC_LISTEN_ADDR: '127.0.0.3' }).listenAddr).toBe(
      '127.0.0.3',
    );
  });

  it('refuses SVC_BIND_ADDRESS and SVC_LISTEN_ADDR set to different addresses, and a malformed address, naming the variable', () => {
    expect(failure({ ...base, SVC_BIND_ADDRESS: '127.0.0.1', SVC_LISTEN_ADDR: '0.0.0.0' })).toContain(
      'SVC_BIND_ADDRESS=127.0.0.1 and SVC_LISTEN_ADDR=0.0.0.0 differ: set SVC_BIND_ADDRESS only',
    );
    expect(failure({ ...base, SVC_BIND_ADDRESS: '127.0.0.1:8443' })).toContain(
      "SVC_BIND_ADDRESS: must be an IP address such as 0.0.0.0, 127.0.0.1 or :: (got '127.0.0.1:8443')",
    );
    expect(failure({ ...base, SVC_LISTEN_ADDR: 'https://127.0.0.1' })).toContain(
      'SVC_LISTEN_ADDR: must be an IP address',
    );
  });

  it('logs every answer by default; SVC_ACCESS_LOG=off turns it off, the OCSP and CRL shares are 0–1 fractions', () => {
    expect(parseConfig(base).accessLog).toEqual({ enabled: true, sampleOcsp: 1, sampleCrl: 1 });
    expect(parseConfig({ ...base, SVC_ACCESS_LOG: 'off' }).accessLog.enabled).toBe(false);
    expect(
      parseConfig({ ...base, SVC_ACCESS_LOG_SAMPLE_OCSP: '0.01', SVC_ACCESS_LOG_SAMPLE_CRL: '0' }).accessLog,
    ).toEqual({ enabled: true, sampleOcsp: 0.01, sampleCrl: 0 });
    expect(failure({ ...base, SVC_ACCESS_LOG: 'maybe' })).toContain('SVC_ACCESS_LOG: must be on or off');
    expect(failure({ ...base, SVC_ACCESS_LOG_SAMPLE_OCSP: '2' })).toContain(
      'SVC_ACCESS_LOG_SAMPLE_OCSP: must be a number from 0 to 1',
    );
    expect(failure({ ...base, SVC_ACCESS_LOG_SAMPLE_CRL: 'half' })).toContain(
      'SVC_ACCESS_LOG_SAMPLE_CRL: must be a number from 0 to 1',
    );
  });

  it('accepts the three database URL schemes', () => {
    for (const url of ['postgres://h/db', 'postgresql://h/db', 'mysql://root@h/db']) {
      expect(parseConfig({ ...base, SVC_DATABASE_URL: url }).databaseUrl).toBe(url);
    }
  });

  it('sends PostgreSQL statements named (prepared) unless SVC_DATABASE_PREPARED_STATEMENTS is false', () => {
    expect(parseConfig(base).databasePreparedStatements).toBe(true);
    expect(
      parseConfig({ ...base, SVC_DATABASE_PREPARED_STATEMENTS: 'false' }).databasePreparedStatements,
    ).toBe(false);
    expect(failure({ ...base, SVC_DATABASE_PREPARED_STATEMENTS: 'off' })).toContain(
      'SVC_DATABASE_PREPARED_STATEMENTS',
    );
  });
});

describe('helpers', () => {
  it('parses Go-style durations', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('2m')).toBe(120_000);
    expect(parseDuration('1.5h')).toBe(5_400_000);
    expect(() => parseDuration('2 minutes')).toThrow(/not a duration/);
  });
});
