import { isIP } from 'node:net';
import { CertwrightError } from '@certwright/core';
import { parseAllowlist } from '@certwright/core/net';
import { z } from 'zod';

/**
 * The service's configuration, parsed once from `SVC_*` variables at start-up and frozen.
 * Every failure names the variable it is about.
 */
export interface ServiceConfig {
  port: number;
  /**
   * SVC_BIND_ADDRESS (alias SVC_LISTEN_ADDR): the address the TLS listener binds to. Default
   * 0.0.0.0, every IPv4 interface: a server in a container or behind a load balancer must be
   * reachable from outside its own host; the quick start binds to 127.0.0.1 instead.
   */
  listenAddr: string;
  tls: { certPath: string; keyPath: string };
  auth: { type: 'api-key'; secret: string } | { type: 'none' };
  dataDir: string;
  /** Absent means embedded PGlite in `dataDir`. */
  databaseUrl: string | undefined;
  /**
   * PostgreSQL: repeated statements go as named (prepared) statements (default true); false
   * behind a pooler that cannot keep them (PgBouncer in transaction mode before 1.21).
   */
  databasePreparedStatements?: boolean;
  /** Present switches queue and ephemeral store to Redis. */
  redisUrl: string | undefined;
  /**
   * 32-byte key sealing secrets at rest (CA keys, issuer and target config). Absent: the
   * server keeps one in `dataDir` — fine for one instance, wrong for several.
   */
  encryptionKey: Uint8Array | undefined;
  /**
   * SVC_ENCRYPTION_KEY_PREVIOUS: keys that still open secrets sealed before a rotation but seal
   * nothing (comma-separated, each like SVC_ENCRYPTION_KEY); empty when unset
   * (docs/operations/key-rotation.md).
   */
  encryptionKeyPrevious: Uint8Array[];
  /**
   * External https URL clients use to reach this server; written into issued certificates'
   * CRL distribution point and OCSP URLs. Absent: `https://localhost:<listening port>`.
   */
  baseUrl: string | undefined;
  /**
   * SVC_CRL_PUBLISH_DIR: a directory every regenerated CRL (DER and PEM), delta CRL and CA
   * certificate is written to, one folder per issuer, for a web server to serve
   * (docs/pki.md, "Publishing CRLs"). Absent: CRLs are served by this server only.
   */
  crlPublishDir: string | undefined;
  /** Email notifications; absent when SVC_SMTP_HOST is unset. */
  smtp:
    | {
        host: string;
        port: number;
        from: string;
        secure: boolean;
        requireTls: boolean;
        auth: { user: string; pass: string } | undefined;
      }
    | undefined;
  /**
   * PKCS#11 key custody for Local CAs with `key_custody: pkcs11`; absent when SVC_PKCS11_MODULE
   * is unset. The PIN (or its file) is a secret: never logged.
   */
  pkcs11:
    | { module: string; tokenLabel: string; pinFile: string | undefined; pin: string | undefined }
    | undefined;
  logLevel: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';
  /** Largest request body any route accepts, in bytes. */
  maxBodyBytes: number;
  /**
   * /metrics: SVC_METRICS_CACHE (default 15s) — how long one storage snapshot is served;
   * SVC_METRICS_CERTIFICATE_SERIES_LIMIT (default 10000, 0 = off) — per-certificate expiry
   * series only up to this inventory size (docs/operations/observability.md).
   */
  metrics: { cacheMs: number; certificateSeriesLimit: number };
  /**
   * SVC_ACCESS_LOG (on | off, default on): one info line per answer; SVC_ACCESS_LOG_SAMPLE_OCSP
   * and SVC_ACCESS_LOG_SAMPLE_CRL (0–1, default 1): the share of successful OCSP and CRL answers
   * logged (docs/operations/observability.md, "Access log").
   */
  accessLog: { enabled: boolean; sampleOcsp: number; sampleCrl: number };
  /**
   * SVC_MAX_CONNECTIONS_PER_CLIENT (128, 0 = off): TLS connections one client address (an IPv6
   * client per /64) may hold open at once; more are closed as they arrive, so one address cannot
   * hold every socket. Trusted proxies (SVC_TRUSTED_PROXIES) are not capped.
   */
  maxConnectionsPerClient: number;
  /** SVC_MAX_VALIDITY_DAYS_WITHOUT_PROFILE: longest leaf validity when a certificate has no profile. */
  maxValidityDaysWithoutProfile: number;
  notificationRetryIntervalMs: number;
  /**
   * Agent liveness and job timeouts: SVC_AGENT_DEGRADED_AFTER (default 2m),
   * SVC_AGENT_OFFLINE_AFTER (10m, must exceed the former), SVC_AGENT_JOB_LEASE (15m),
   * SVC_AGENT_CSR_TIMEOUT (24h). Same shape as the services' AgentSettings.
   */
  agents: { degradedAfterMs: number; offlineAfterMs: number; jobLeaseMs: number; csrTimeoutMs: number };
  /** Shutdown grace period for in-flight requests and jobs. */
  shutdownTimeoutMs: number;
  /**
   * SVC_SERVER_WORKERS (1): listener processes sharing the port (node:cluster), each a full
   * instance. More than one needs shared storage (SVC_DATABASE_URL) and SVC_REDIS_URL, exactly
   * as several instances do (docs/operations/scaling.md).
   */
  serverWorkers: number;
  /**
   * The ACME server: SVC_ACME_SERVER_DEFAULT_PROFILE_ID (prof-default) is the profile of the
   * shorthand `/acme/…` routes; SVC_ACME_SERVER_ARI_ENABLED (true) serves RFC 9773 renewal
   * information, polled every SVC_ACME_SERVER_ARI_POLL_INTERVAL (6h).
   */
  acmeServer: { defaultProfileId: string; ariEnabled: boolean; ariPollIntervalMs: number };
  /**
   * Per-client limits (docs/operations/configuration.md): requests per `windowMs` on the
   * unauthenticated routes by class, each endpoint counted alone — SVC_RATE_LIMIT_WINDOW (10s),
   * SVC_RATE_LIMIT_PUBLIC, SVC_RATE_LIMIT_PKI, SVC_RATE_LIMIT_ENROLLMENT (200 each: 20 a
   * second), 0 = off — signed ACME requests per account, SVC_RATE_LIMIT_ACME_ACCOUNT (200 per
   * window, 0 = off) — and failed API keys:
   * SVC_AUTH_FAILURE_LIMIT (10, 0 = off) per SVC_AUTH_FAILURE_WINDOW (5m).
   */
  rateLimits: {
    windowMs: number;
    public: number;
    pki: number;
    enrollment: number;
    acmeAccount: number;
    authFailures: number;
    authFailureWindowMs: number;
  };
  /**
   * EST (docs/protocols/est.md): SVC_EST_DEFAULT_PROFILE_ID (prof-default) serves the root
   * routes; SVC_EST_RATE_LIMIT (60, 0 = off) enrollment requests per principal and profile per
   * SVC_EST_RATE_LIMIT_WINDOW (1m).
   */
  est: { defaultProfileId: string; rateLimit: { limit: number; windowMs: number } | null };
  /**
   * SCEP (docs/protocols/scep.md): SVC_SCEP_DEFAULT_PROFILE_ID (prof-default) serves the root
   * routes; SVC_SCEP_RATE_LIMIT (60, 0 = off) enrollment requests per credential and profile per
   * SVC_SCEP_RATE_LIMIT_WINDOW (1m).
   */
  scep: { defaultProfileId: string; rateLimit: { limit: number; windowMs: number } | null };
  /**
   * ACME challenge validation (docs/protocols/acme.md): worker pool per challenge type
   * (SVC_ACME_SERVER_{HTTP01,DNS01,TLSALPN01}_CONCURRENCY, default 10 each), the ports the
   * validators connect to (SVC_ACME_SERVER_HTTP01_PORT 80, SVC_ACME_SERVER_TLSALPN01_PORT 443),
   * the dns-01 DNS server (SVC_ACME_SERVER_DNS01_RESOLVER, 8.8.8.8:53), an optional DNS server
   * for http-01/tls-alpn-01 names (SVC_ACME_SERVER_VALIDATION_RESOLVER) and the private ranges
   * validation may reach (SVC_ACME_SERVER_VALIDATION_ALLOWED_RANGES, comma-separated).
   */
  acmeValidation: {
    concurrency: { http01: number; dns01: number; tlsAlpn01: number };
    httpPort: number;
    tlsAlpnPort: number;
    dns01Resolver: string;
    validationResolver: string | undefined;
    allowedRanges: string[];
  };
  /**
   * SCEP probe (docs/protocols/scep-probe.md): the private ranges it may reach
   * (SVC_SCEP_PROBE_ALLOWED_RANGES, comma-separated, default none). Loopback entries are
   * refused: no setting lets the probe reach the server's own host.
   */
  scepProbe: { allowedRanges: string[] };
  /**
   * Sessions of signed-in users (docs/auth/sessions.md): SVC_SESSION_IDLE_TIMEOUT (30m),
   * SVC_SESSION_ABSOLUTE_TIMEOUT (12h), SVC_SESSION_BIND_USER_AGENT (true), and the sweep of
   * ended sessions every SVC_SESSION_GC_INTERVAL (15m).
   */
  sessions: {
    idleTimeoutMs: number;
    absoluteTimeoutMs: number;
    bindUserAgent: boolean;
    gcIntervalMs: number;
  };
  /**
   * The first administrator (docs/auth/bootstrap.md), created once at start-up with the admin
   * role when SVC_BOOTSTRAP_ADMIN_SUBJECT is set: SVC_BOOTSTRAP_ADMIN_PROVIDER_ID (the OIDC
   * provider of that subject; unset = a local actor) and SVC_BOOTSTRAP_ADMIN_EMAIL.
   */
  bootstrapAdmin: { subject: string; providerId?: string; email?: string } | undefined;
  /**
   * OIDC sign-in (docs/auth/oidc.md): SVC_OIDC_PRELOGIN_REQUIRE_UA (true) and
   * SVC_OIDC_PRELOGIN_REQUIRE_IP (false) bind the callback to the browser that started it;
   * SVC_OIDC_BCL_MAX_AGE_SECONDS (300) bounds the age of back-channel logout tokens;
   * SVC_OIDC_CA_BUNDLE_PATH (unset) names a PEM bundle of extra trust anchors for identity
   * providers whose TLS certificate chains to a private CA (discovery, keys and token calls).
   */
  oidc: {
    preloginRequireUa: boolean;
    preloginRequireIp: boolean;
    bclMaxAgeSeconds: number;
    caBundlePath?: string;
  };
  /**
   * Break-glass credentials (docs/auth/breakglass.md): SVC_BREAKGLASS_ENABLED (false; otherwise
   * their routes and login are 404), SVC_BREAKGLASS_LOCKOUT_THRESHOLD (5 failures) and
   * SVC_BREAKGLASS_LOCKOUT_DURATION (15m).
   */
  breakglass: { enabled: boolean; lockoutThreshold: number; lockoutMs: number };
  /**
   * SVC_TRUSTED_PROXIES: addresses and CIDR ranges of reverse proxies whose X-Forwarded-For is
   * believed for the client address (rate limits, audit, session binding); empty = none.
   */
  trustedProxies: string[];
  /**
   * SVC_DEMO_SEED (false) seeds demo users at start-up — demo mode — and needs
   * SVC_DEMO_MODE_ACK=true to acknowledge it (docs/auth/demo.md).
   */
  demo: { seed: boolean; modeAck: boolean };
  /**
   * Scheduled backups (docs/operations/backup.md): SVC_BACKUP_DIR (unset = none) receives one
   * every SVC_BACKUP_INTERVAL (24h), of which the newest SVC_BACKUP_KEEP (7) are kept.
   */
  backups: { dir?: string; intervalMs: number; keep: number };
}

export const JWT_REFUSED_MESSAGE =
  'SVC_AUTH_TYPE=jwt is not supported: certwright has no JWT middleware. For JWT or OIDC, put an ' +
  'authenticating gateway in front of the service and run it with SVC_AUTH_TYPE=none.';

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** Parses Go-style durations such as `500ms`, `30s`, `2m`, `1h`. */
export function parseDuration(text: string): number {
  const match = DURATION.exec(text.trim());
  if (!match) throw new Error(`'${text}' is not a duration such as 30s, 2m or 1h`);
  return Math.round(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]);
}

// 0 asks the OS for a free port (tests, side-by-side instances).
const port = z.coerce.number().int().min(0).max(65535);
const duration = z.string().transform((text, ctx) => {
  try {
    return parseDuration(text);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
    return z.NEVER;
  }
});
/** A URL of one of `schemes` with a host. The value is never echoed: it may hold a password. */
const url = (schemes: string[]) =>
  z
    .string()
    .refine((value) => schemes.some((s) => value.startsWith(`${s}://`)), {
      message: `must start with ${schemes.map((s) => `${s}://`).join(', ')}`,
    })
    .refine(
      (value) => {
        // A wrong scheme is the refinement above; this one judges only URLs that have a right one.
        if (!schemes.some((s) => value.startsWith(`${s}://`))) return true;
        try {
          return new URL(value).hostname !== '';
        } catch {
          return false;
        }
      },
      {
        message: `is not a valid URL (like ${schemes[0]}://user:password@host:port/name); percent-encode @ : / # ? in the user name or password`,
      },
    );

/** 32 bytes as 64 hex digits or base64/base64url (`openssl rand -base64 32`). */
export function decodeEncryptionKey(text: string): Uint8Array {
  const trimmed = text.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, 'hex')
    : Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (bytes.byteLength !== 32) throw new Error('must be 32 bytes as 64 hex digits or base64');
  return new Uint8Array(bytes);
}

const encryptionKey = z.string().transform((text, ctx) => {
  try {
    const key = decodeEncryptionKey(text);
    const bits = estimateEntropyBits(key);
    if (bits < MIN_KEY_ENTROPY_BITS) {
      ctx.addIssue({ code: 'custom', message: tooLittleEntropy(bits, MIN_KEY_ENTROPY_BITS) });
      return z.NEVER;
    }
    return key;
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
    return z.NEVER;
  }
});

/** Comma-separated keys, each checked like SVC_ENCRYPTION_KEY; the message names the bad one by position. */
const encryptionKeyList = z.string().transform((text, ctx) => {
  const keys: Uint8Array[] = [];
  for (const [i, part] of text.split(',').entries()) {
    const result = encryptionKey.safeParse(part);
    if (!result.success) {
      ctx.addIssue({
        code: 'custom',
        message: `key ${i + 1}: ${result.error.issues.map((x) => x.message).join('; ')}`,
      });
      return z.NEVER;
    }
    keys.push(result.data);
  }
  return keys;
});

/** An API secret: long enough, and not a repeated character or a tiny alphabet. */
const authSecret = z
  .string()
  .min(16, 'must be at least 16 characters')
  .superRefine((text, ctx) => {
    const bits = estimateEntropyBits(text);
    if (text.length >= 16 && bits < MIN_SECRET_ENTROPY_BITS) {
      ctx.addIssue({ code: 'custom', message: tooLittleEntropy(bits, MIN_SECRET_ENTROPY_BITS) });
    }
  });

/** An origin only: a path would be doubled when route paths are appended. */
const baseUrl = z
  .string()
  .transform((value) => value.replace(/\/+$/, ''))
  .refine((value) => /^https:\/\/[^/?#]+$/.test(value), {
    message: 'must be an https:// origin without a path',
  });

const count = z.coerce.number().int().min(0).max(1_000_000);
const poolSize = z.coerce.number().int().min(1).max(1000);
const validationPort = z.coerce.number().int().min(1).max(65535);
const hostPort = z
  .string()
  .regex(/^(\[[0-9a-fA-F:.]+\]|[0-9.]+):\d{1,5}$/, 'must be ip:port, e.g. 8.8.8.8:53');
/** Comma-separated IP addresses and CIDR ranges, in their canonical form. */
const rangeList = z.string().transform((text, ctx) => {
  try {
    return [...parseAllowlist(text, 'range').entries];
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message.replace(/^range: /, '') });
    return z.NEVER;
  }
});

/** Like {@link rangeList}, for destinations that must never be this host. */
const rangeListWithoutLoopback = rangeList.superRefine((entries, ctx) => {
  const loopback = parseAllowlist(entries, 'range').loopbackEntries;
  if (loopback.length > 0) {
    ctx.addIssue({
      code: 'custom',
      message: `loopback entries (${loopback.join(', ')}) are not allowed: the SCEP probe never connects to this host`,
    });
  }
});

/** A record id (`prof-default`): what goes into a URL path segment. */
const idText = z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, 'must be a record id such as prof-default');

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const onOff = z
  .enum(['on', 'off', 'true', 'false', '1', '0'], { message: 'must be on or off' })
  .transform((v) => v === 'on' || v === 'true' || v === '1');
/** A share from 0 (none) to 1 (all), e.g. 0.01. */
const fraction = z.coerce
  .number({ message: 'must be a number from 0 to 1' })
  .min(0, 'must be a number from 0 to 1')
  .max(1, 'must be a number from 0 to 1');

type Env = Record<string, string | undefined>;

/**
 * SVC_BIND_ADDRESS, or SVC_LISTEN_ADDR (the name of earlier releases, still accepted) when only
 * it is set. Both set and different is refused: which one wins would be a guess.
 */
function bindAddress(env: Env, problems: string[]): string {
  const named = env.SVC_BIND_ADDRESS || undefined;
  const alias = env.SVC_LISTEN_ADDR || undefined;
  if (named !== undefined && alias !== undefined && named.trim() !== alias.trim()) {
    problems.push(
      `SVC_BIND_ADDRESS=${named} and SVC_LISTEN_ADDR=${alias} differ: set SVC_BIND_ADDRESS only (SVC_LISTEN_ADDR is its older name)`,
    );
    return '0.0.0.0';
  }
  const [name, value] = named !== undefined ? ['SVC_BIND_ADDRESS', named] : ['SVC_LISTEN_ADDR', alias];
  if (value === undefined) return '0.0.0.0';
  const address = value.trim().replace(/^\[(.*)\]$/, '$1');
  // An address, or a host name this host resolves (localhost), as node:net's listen takes.
  if (isIP(address) === 0 && !/^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})$/.test(address)) {
    problems.push(`${name}: must be an IP address such as 0.0.0.0, 127.0.0.1 or :: (got '${value}')`);
    return '0.0.0.0';
  }
  return address;
}

export function parseConfig(env: Env): Readonly<ServiceConfig> {
  const problems: string[] = [];
  const read = <T>(name: string, schema: z.ZodType<T>, fallback?: string): T | undefined => {
    const raw = env[name] === '' ? undefined : env[name];
    const value = raw ?? fallback;
    if (value === undefined) return undefined;
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    problems.push(`${name}: ${result.error.issues.map((i) => i.message).join('; ')}`);
    return undefined;
  };
  const required = <T>(name: string, schema: z.ZodType<T>, why: string): T | undefined => {
    if (!env[name]) {
      problems.push(`${name} is required (${why})`);
      return undefined;
    }
    return read(name, schema);
  };

  const authType = env.SVC_AUTH_TYPE || 'api-key';
  if (authType === 'jwt') throw new CertwrightError('config_invalid', JWT_REFUSED_MESSAGE);
  if (authType !== 'api-key' && authType !== 'none') {
    throw new CertwrightError(
      'config_invalid',
      `SVC_AUTH_TYPE='${authType}' is not supported: use api-key or none`,
    );
  }
  const secret =
    authType === 'api-key' ? required('SVC_AUTH_SECRET', authSecret, 'SVC_AUTH_TYPE is api-key') : undefined;

  const config: ServiceConfig = {
    port: read('SVC_PORT', port, '8443') as number,
    listenAddr: bindAddress(env, problems),
    tls: {
      certPath: required('SVC_TLS_CERT_PATH', z.string(), 'the server listens on TLS only') as string,
      keyPath: required('SVC_TLS_KEY_PATH', z.string(), 'the server listens on TLS only') as string,
    },
    auth: authType === 'api-key' ? { type: 'api-key', secret: secret as string } : { type: 'none' },
    dataDir: read('SVC_DATA_DIR', z.string().min(1), './data') as string,
    databaseUrl: read('SVC_DATABASE_URL', url(['postgres', 'postgresql', 'mysql'])),
    databasePreparedStatements: read('SVC_DATABASE_PREPARED_STATEMENTS', bool, 'true') as boolean,
    redisUrl: read('SVC_REDIS_URL', url(['redis', 'rediss'])),
    encryptionKey: read('SVC_ENCRYPTION_KEY', encryptionKey),
    encryptionKeyPrevious: read('SVC_ENCRYPTION_KEY_PREVIOUS', encryptionKeyList) ?? [],
    baseUrl: read('SVC_BASE_URL', baseUrl),
    crlPublishDir: read('SVC_CRL_PUBLISH_DIR', z.string().min(1).max(4096)) as string | undefined,
    smtp: env.SVC_SMTP_HOST
      ? {
          host: env.SVC_SMTP_HOST,
          port: read('SVC_SMTP_PORT', port, '587') as number,
          from: required('SVC_SMTP_FROM', z.string().min(3), 'SVC_SMTP_HOST is set') as string,
          secure: read('SVC_SMTP_SECURE', bool, 'false') as boolean,
          requireTls: read('SVC_SMTP_REQUIRE_TLS', bool, 'true') as boolean,
          auth: env.SVC_SMTP_USER
            ? {
                user: env.SVC_SMTP_USER,
                pass: required('SVC_SMTP_PASSWORD', z.string(), 'SVC_SMTP_USER is set') as string,
              }
            : undefined,
        }
      : undefined,
    pkcs11: env.SVC_PKCS11_MODULE
      ? {
          module: env.SVC_PKCS11_MODULE,
          tokenLabel: required(
            'SVC_PKCS11_TOKEN_LABEL',
            z.string().min(1).max(32),
            'SVC_PKCS11_MODULE is set',
          ) as string,
          pinFile: env.SVC_PKCS11_PIN_FILE || undefined,
          pin: env.SVC_PKCS11_PIN || undefined,
        }
      : undefined,
    logLevel: read(
      'SVC_LOG_LEVEL',
      z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']),
      'info',
    ) as ServiceConfig['logLevel'],
    maxBodyBytes: read(
      'SVC_MAX_BODY_BYTES',
      z.coerce.number().int().min(1024),
      String(1024 * 1024),
    ) as number,
    metrics: {
      cacheMs: read('SVC_METRICS_CACHE', duration, '15s') as number,
      certificateSeriesLimit: read('SVC_METRICS_CERTIFICATE_SERIES_LIMIT', count, '10000') as number,
    },
    accessLog: {
      enabled: read('SVC_ACCESS_LOG', onOff, 'on') as boolean,
      sampleOcsp: read('SVC_ACCESS_LOG_SAMPLE_OCSP', fraction, '1') as number,
      sampleCrl: read('SVC_ACCESS_LOG_SAMPLE_CRL', fraction, '1') as number,
    },
    maxConnectionsPerClient: read('SVC_MAX_CONNECTIONS_PER_CLIENT', count, '128') as number,
    maxValidityDaysWithoutProfile: read(
      'SVC_MAX_VALIDITY_DAYS_WITHOUT_PROFILE',
      z.coerce.number().int().min(1).max(3650),
      '397',
    ) as number,
    notificationRetryIntervalMs: read('SVC_NOTIFICATION_RETRY_INTERVAL', duration, '2m') as number,
    shutdownTimeoutMs: read('SVC_SHUTDOWN_TIMEOUT', duration, '10s') as number,
    serverWorkers: read('SVC_SERVER_WORKERS', z.coerce.number().int().min(1).max(64), '1') as number,
    rateLimits: {
      windowMs: read('SVC_RATE_LIMIT_WINDOW', duration, '10s') as number,
      public: read('SVC_RATE_LIMIT_PUBLIC', count, '200') as number,
      pki: read('SVC_RATE_LIMIT_PKI', count, '200') as number,
      enrollment: read('SVC_RATE_LIMIT_ENROLLMENT', count, '200') as number,
      acmeAccount: read('SVC_RATE_LIMIT_ACME_ACCOUNT', count, '200') as number,
      authFailures: read('SVC_AUTH_FAILURE_LIMIT', count, '10') as number,
      authFailureWindowMs: read('SVC_AUTH_FAILURE_WINDOW', duration, '5m') as number,
    },
    acmeValidation: {
      concurrency: {
        http01: read('SVC_ACME_SERVER_HTTP01_CONCURRENCY', poolSize, '10') as number,
        dns01: read('SVC_ACME_SERVER_DNS01_CONCURRENCY', poolSize, '10') as number,
        tlsAlpn01: read('SVC_ACME_SERVER_TLSALPN01_CONCURRENCY', poolSize, '10') as number,
      },
      httpPort: read('SVC_ACME_SERVER_HTTP01_PORT', validationPort, '80') as number,
      tlsAlpnPort: read('SVC_ACME_SERVER_TLSALPN01_PORT', validationPort, '443') as number,
      dns01Resolver: read('SVC_ACME_SERVER_DNS01_RESOLVER', hostPort, '8.8.8.8:53') as string,
      validationResolver: read('SVC_ACME_SERVER_VALIDATION_RESOLVER', hostPort),
      allowedRanges: read('SVC_ACME_SERVER_VALIDATION_ALLOWED_RANGES', rangeList, '') as string[],
    },
    scepProbe: {
      allowedRanges: read('SVC_SCEP_PROBE_ALLOWED_RANGES', rangeListWithoutLoopback, '') as string[],
    },
    acmeServer: {
      defaultProfileId: read('SVC_ACME_SERVER_DEFAULT_PROFILE_ID', idText, 'prof-default') as string,
      ariEnabled: read('SVC_ACME_SERVER_ARI_ENABLED', bool, 'true') as boolean,
      ariPollIntervalMs: read('SVC_ACME_SERVER_ARI_POLL_INTERVAL', duration, '6h') as number,
    },
    est: {
      defaultProfileId: read(
        'SVC_EST_DEFAULT_PROFILE_ID',
        z.string().min(1).max(128),
        'prof-default',
      ) as string,
      rateLimit: {
        limit: read('SVC_EST_RATE_LIMIT', count, '60') as number,
        windowMs: read('SVC_EST_RATE_LIMIT_WINDOW', duration, '1m') as number,
      },
    },
    scep: {
      defaultProfileId: read('SVC_SCEP_DEFAULT_PROFILE_ID', idText, 'prof-default') as string,
      rateLimit: {
        limit: read('SVC_SCEP_RATE_LIMIT', count, '60') as number,
        windowMs: read('SVC_SCEP_RATE_LIMIT_WINDOW', duration, '1m') as number,
      },
    },
    agents: {
      degradedAfterMs: read('SVC_AGENT_DEGRADED_AFTER', duration, '2m') as number,
      offlineAfterMs: read('SVC_AGENT_OFFLINE_AFTER', duration, '10m') as number,
      jobLeaseMs: read('SVC_AGENT_JOB_LEASE', duration, '15m') as number,
      csrTimeoutMs: read('SVC_AGENT_CSR_TIMEOUT', duration, '24h') as number,
    },
    sessions: {
      idleTimeoutMs: read('SVC_SESSION_IDLE_TIMEOUT', duration, '30m') as number,
      absoluteTimeoutMs: read('SVC_SESSION_ABSOLUTE_TIMEOUT', duration, '12h') as number,
      bindUserAgent: read('SVC_SESSION_BIND_USER_AGENT', bool, 'true') as boolean,
      gcIntervalMs: read('SVC_SESSION_GC_INTERVAL', duration, '15m') as number,
    },
    demo: {
      seed: read('SVC_DEMO_SEED', bool, 'false') as boolean,
      modeAck: read('SVC_DEMO_MODE_ACK', bool, 'false') as boolean,
    },
    trustedProxies: read('SVC_TRUSTED_PROXIES', rangeList, '') as string[],
    backups: {
      ...(env.SVC_BACKUP_DIR ? { dir: read('SVC_BACKUP_DIR', z.string().min(1).max(4096)) as string } : {}),
      intervalMs: read('SVC_BACKUP_INTERVAL', duration, '24h') as number,
      keep: read('SVC_BACKUP_KEEP', z.coerce.number().int().min(1).max(1000), '7') as number,
    },
    breakglass: {
      enabled: read('SVC_BREAKGLASS_ENABLED', bool, 'false') as boolean,
      lockoutThreshold: read(
        'SVC_BREAKGLASS_LOCKOUT_THRESHOLD',
        z.coerce.number().int().min(1).max(100),
        '5',
      ) as number,
      lockoutMs: read('SVC_BREAKGLASS_LOCKOUT_DURATION', duration, '15m') as number,
    },
    oidc: {
      preloginRequireUa: read('SVC_OIDC_PRELOGIN_REQUIRE_UA', bool, 'true') as boolean,
      preloginRequireIp: read('SVC_OIDC_PRELOGIN_REQUIRE_IP', bool, 'false') as boolean,
      bclMaxAgeSeconds: read(
        'SVC_OIDC_BCL_MAX_AGE_SECONDS',
        z.coerce.number().int().min(10).max(86_400),
        '300',
      ) as number,
      ...(env.SVC_OIDC_CA_BUNDLE_PATH
        ? { caBundlePath: read('SVC_OIDC_CA_BUNDLE_PATH', z.string().min(1).max(4096)) as string }
        : {}),
    },
    bootstrapAdmin: env.SVC_BOOTSTRAP_ADMIN_SUBJECT
      ? {
          subject: read('SVC_BOOTSTRAP_ADMIN_SUBJECT', z.string().min(1).max(255)) as string,
          ...(env.SVC_BOOTSTRAP_ADMIN_PROVIDER_ID
            ? { providerId: read('SVC_BOOTSTRAP_ADMIN_PROVIDER_ID', idText) as string }
            : {}),
          ...(env.SVC_BOOTSTRAP_ADMIN_EMAIL
            ? { email: read('SVC_BOOTSTRAP_ADMIN_EMAIL', z.email().max(320)) as string }
            : {}),
        }
      : undefined,
  };
  for (const [name, ms] of [
    ['SVC_RATE_LIMIT_WINDOW', config.rateLimits.windowMs],
    ['SVC_AUTH_FAILURE_WINDOW', config.rateLimits.authFailureWindowMs],
    ['SVC_ACME_SERVER_ARI_POLL_INTERVAL', config.acmeServer.ariPollIntervalMs],
    ['SVC_EST_RATE_LIMIT_WINDOW', config.est.rateLimit?.windowMs],
    ['SVC_SCEP_RATE_LIMIT_WINDOW', config.scep.rateLimit?.windowMs],
    ['SVC_SESSION_IDLE_TIMEOUT', config.sessions.idleTimeoutMs],
    ['SVC_SESSION_ABSOLUTE_TIMEOUT', config.sessions.absoluteTimeoutMs],
    ['SVC_SESSION_GC_INTERVAL', config.sessions.gcIntervalMs],
    ['SVC_BREAKGLASS_LOCKOUT_DURATION', config.breakglass.lockoutMs],
    ['SVC_BACKUP_INTERVAL', config.backups.intervalMs],
  ] as const) {
    if (ms !== undefined && ms < 1000) problems.push(`${name}: must be at least 1s`);
  }
  if (config.est.rateLimit?.limit === 0) config.est.rateLimit = null;
  if (config.scep.rateLimit?.limit === 0) config.scep.rateLimit = null;
  if (config.demo.seed && !config.demo.modeAck) {
    problems.push('SVC_DEMO_SEED: demo mode seeds demo users; set SVC_DEMO_MODE_ACK=true to acknowledge it');
  }
  if (config.sessions.absoluteTimeoutMs < config.sessions.idleTimeoutMs) {
    problems.push('SVC_SESSION_ABSOLUTE_TIMEOUT: must not be shorter than SVC_SESSION_IDLE_TIMEOUT');
  }
  if (config.agents.offlineAfterMs <= config.agents.degradedAfterMs) {
    problems.push('SVC_AGENT_OFFLINE_AFTER: must be longer than SVC_AGENT_DEGRADED_AFTER');
  }
  if (config.serverWorkers > 1) {
    // Each worker is a full instance: PGlite allows one process per data directory, and
    // nonces, rate limits and revocation generations are shared only through Redis.
    if (config.databaseUrl === undefined) {
      problems.push(
        `SVC_SERVER_WORKERS=${config.serverWorkers} needs shared storage: set SVC_DATABASE_URL (PostgreSQL or MySQL); the embedded PGlite database serves one process`,
      );
    }
    if (config.redisUrl === undefined) {
      problems.push(
        `SVC_SERVER_WORKERS=${config.serverWorkers} needs SVC_REDIS_URL: workers share nonces, rate limits and revocation state through Redis`,
      );
    }
  }
  if (config.encryptionKeyPrevious.length > 0 && !env.SVC_ENCRYPTION_KEY) {
    problems.push(
      'SVC_ENCRYPTION_KEY_PREVIOUS needs SVC_ENCRYPTION_KEY: the new key that seals, while the previous keys only open',
    );
  }
  if (config.pkcs11 && !config.pkcs11.pin && !config.pkcs11.pinFile) {
    problems.push('SVC_PKCS11_PIN_FILE or SVC_PKCS11_PIN is required (SVC_PKCS11_MODULE is set)');
  }
  if (problems.length > 0) {
    throw new CertwrightError('config_invalid', `invalid configuration: ${problems.join('; ')}`);
  }
  return deepFreeze(config);
}

/**
 * Freezes the configuration all the way down. The encryption keys (Uint8Arrays, which cannot be
 * frozen) are kept private and handed out as a fresh copy on each read, so nothing can change
 * the key the process was configured with.
 */
function deepFreeze(config: ServiceConfig): Readonly<ServiceConfig> {
  const key = config.encryptionKey;
  const previous = config.encryptionKeyPrevious;
  const frozen = (value: object): void => {
    for (const member of Object.values(value)) {
      if (member !== null && typeof member === 'object' && !ArrayBuffer.isView(member)) frozen(member);
    }
    Object.freeze(value);
  };
  Object.defineProperty(config, 'encryptionKey', {
    enumerable: true,
    get: () => (key ? new Uint8Array(key) : undefined),
  });
  Object.defineProperty(config, 'encryptionKeyPrevious', {
    enumerable: true,
    get: () => previous.map((k) => new Uint8Array(k)),
  });
  frozen(config);
  return config;
}

/** Estimated entropy below which SVC_AUTH_SECRET is refused. */
export const MIN_SECRET_ENTROPY_BITS = 64;
/** Estimated entropy below which SVC_ENCRYPTION_KEY is refused (32 random bytes estimate ≈ 150). */
export const MIN_KEY_ENTROPY_BITS = 128;

/**
 * A cautious estimate of a secret's entropy: its length times the Shannon entropy of its
 * symbol frequencies. One repeated symbol scores 0, a two-symbol alphabet at most one bit per
 * symbol; it cannot see structure such as dictionary words, so it only catches the obvious.
 */
export function estimateEntropyBits(value: string | Uint8Array): number {
  const symbols = typeof value === 'string' ? [...value] : [...value];
  const counts = new Map<string | number, number>();
  for (const symbol of symbols) counts.set(symbol, (counts.get(symbol) ?? 0) + 1);
  let perSymbol = 0;
  for (const count of counts.values()) {
    const p = count / symbols.length;
    perSymbol -= p * Math.log2(p);
  }
  return perSymbol * symbols.length;
}

const tooLittleEntropy = (bits: number, needed: number) =>
  `has too little entropy (about ${Math.floor(bits)} bits estimated, at least ${needed} needed): ` +
  'use a random value such as the output of `openssl rand -base64 32`';
