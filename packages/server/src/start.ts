import { randomUUID, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { rootCertificates } from 'node:tls';
import {
  type CertwrightHandler,
  createHandler,
  type HandlerOptions,
  problem,
  trustedProxyClientAddress,
} from '@certwright/api';
import {
  CertwrightError,
  createServices,
  DEFAULT_SCAN_CONCURRENCY,
  DirectoryCrlPublisher,
  type DirectPath,
  type Handler,
  type Logger,
  NotificationChannelRegistry,
  systemClock,
} from '@certwright/core';
import {
  createAdministratorClient,
  createWebhookClient,
  parseAddress,
  parseAllowlist,
  type WebhookClientOptions,
} from '@certwright/core/net';
import { createSmtpChannel, type SmtpChannel } from '@certwright/notify-smtp';
import { createAccessLog } from './access-log.js';
import { acmeValidation } from './acme-validation.js';
import { readBuildInfo } from './build-info.js';
import { workerSlot } from './cluster.js';
import type { ServiceConfig } from './config.js';
import { createMetrics } from './metrics.js';
import { openRuntime, type Runtime } from './runtime.js';
import { endOfLife, RECOMMENDED_NODE_MAJOR } from './runtime-support.js';
import {
  type LeasedTask,
  type SchedulerTick,
  startCrlRefresh,
  startDiscoveryScans,
  startEndpointHealth,
  startIssuanceWorker,
  startJobTimeouts,
  startNotificationRetry,
  startRekeyJob,
  startRenewalScan,
  startScheduledBackups,
  startSessionGc,
  startStorageMaintenance,
} from './schedulers/index.js';
import { startTlsServer } from './tls-server.js';
import { apiSegmentsOf, openWebAssets } from './web-assets.js';
import { startWorkers, type WorkerHost, workTopics } from './workers.js';

export interface RunningServer {
  readonly port: number;
  readonly url: string;
  /** Settles once storage is migrated and every route is served; rejects on a fatal start-up error. */
  readonly ready: Promise<void>;
  /** SIGHUP: swap the TLS certificate and key; false when the new pair was refused. */
  reloadTls(): Promise<boolean>;
  /** SIGTERM: stop schedulers, drain in-flight requests, then release storage. */
  close(): Promise<void>;
}

/**
 * Assembles the reference server. The TLS listener comes up first: until the database is
 * reachable and migrated, /health answers, /ready is 503 and every other route is 503, so an
 * orchestrator can tell "alive" from "ready" and a database outage at start is waited out.
 */
/**
 * In-process embedding knobs that no configuration variable reaches. The CLI never passes them;
 * tests do, to deliver webhooks to receivers on 127.0.0.1 (the loopback opt-in and a resolver),
 * to scan and health-check servers on 127.0.0.1, and to tick faster.
 */
export interface StartOptions {
  /** Test rigs only: the CA bundle (PEM) the OIDC relying party trusts for identity providers. */
  oidc?: { ca?: string };
  /**
   * Test rigs only: identity providers and external ACME directories may be on 127.0.0.0/8 and
   * ::1, which destinations an administrator names never reach otherwise
   * (docs/operations/outbound-connections.md).
   */
  administratorLoopback?: boolean;
  /** The built web console's directory; default @certwright/web's dist/, null serves none. */
  webDir?: string | null;
  webhooks?: WebhookClientOptions;
  renewalScanIntervalMs?: number;
  /** Tick of the background re-seal while previous encryption keys are set; default 10 s. */
  rekeyIntervalMs?: number;
  discovery?: {
    /** Test rigs only: scan targets and health checks may name 127.0.0.0/8 and ::1. */
    allowLoopback?: boolean;
    /** Endpoint health and scan scheduler tick; default 60 s. */
    tickMs?: number;
    /** Per-endpoint connect and handshake timeout of scans and checks. */
    timeoutMs?: number;
  };
}

export async function startServer(
  config: Readonly<ServiceConfig>,
  logger: Logger,
  options: StartOptions = {},
): Promise<RunningServer> {
  const eol = endOfLife(process.version, new Date());
  if (eol) {
    logger.warn(
      { node: process.version, end_of_life: eol.date },
      `Node.js ${eol.major} reached end of life on ${eol.date} and receives no security fixes: ` +
        `run certwright on Node.js ${RECOMMENDED_NODE_MAJOR} LTS`,
    );
  }
  // Each worker of SVC_SERVER_WORKERS answers /metrics for itself: its series carry its slot.
  const slot = workerSlot();
  const metrics =
    slot === undefined ? createMetrics() : createMetrics({ worker: slot }, { clusterWorker: true, logger });
  const { caBundlePath: oidcCaBundlePath, ...oidcSettings } = config.oidc;
  const oidcCa = oidcCaBundlePath ? await readOidcCaBundle(oidcCaBundlePath) : undefined;
  const oidcTrust = options.oidc?.ca ?? oidcCa;
  const common: HandlerOptions = {
    auth: config.auth,
    version: await readBuildInfo(),
    logger,
    maxBodyBytes: config.maxBodyBytes,
    rateLimits: config.rateLimits,
    oidc: {
      settings: oidcSettings,
      outbound: createAdministratorClient({ loopbackForTests: options.administratorLoopback === true }),
      ...(oidcTrust ? { ca: oidcTrust } : {}),
    },
    runtime: {
      trustedProxies: config.trustedProxies,
      demoSeeded: config.demo.seed,
      demoModeAck: config.demo.modeAck,
    },
    ...(config.trustedProxies.length > 0
      ? {
          clientAddress: trustedProxyClientAddress(
            parseAllowlist(config.trustedProxies, 'SVC_TRUSTED_PROXIES'),
          ),
        }
      : {}),
    acme: {
      defaultProfileId: config.acmeServer.defaultProfileId,
      ...(config.baseUrl ? { baseUrl: config.baseUrl } : {}),
      settings: {
        renewalInfo: config.acmeServer.ariEnabled,
        renewalInfoPollSeconds: Math.ceil(config.acmeServer.ariPollIntervalMs / 1000),
        accountRequests:
          config.rateLimits.acmeAccount === 0
            ? null
            : { limit: config.rateLimits.acmeAccount, windowMs: config.rateLimits.windowMs },
      },
    },
    est: { defaultProfileId: config.est.defaultProfileId, rateLimit: config.est.rateLimit },
    scep: { defaultProfileId: config.scep.defaultProfileId, rateLimit: config.scep.rateLimit },
    metrics: () => metrics.render(),
    onResponse: (event) => metrics.observe(event),
  };
  const starting = createHandler({
    ...common,
    readiness: async () => ({ storage: { ok: false, detail: 'starting' } }),
  });
  let full: CertwrightHandler | undefined;
  // The web console (docs/web.md) answers GET and HEAD outside the API's and protocols' paths.
  const web = options.webDir === null ? undefined : openWebAssets(logger, options.webDir);
  let apiSegments = apiSegmentsOf(starting);
  const handler: Handler = (request, transport) => {
    if (web?.owns(request, apiSegments)) return Promise.resolve(web.serve(request));
    return full ? full(request, transport) : startingHandler(starting, request, transport);
  };
  // The full handler's direct entry (OCSP without Web Request/Response, docs/architecture.md
  // "Direct path (OCSP and SCEP)") once it is ready; while starting, every request takes the Web path.
  // The web console never owns a protocol path, so asking the direct entry first is safe.
  const direct: DirectPath = {
    bodyLimit: (method, pathname) => full?.direct.bodyLimit(method, pathname),
    answer: (head, body, transport) =>
      full ? full.direct.answer(head, body, transport) : Promise.resolve(undefined),
  };

  const proxies =
    config.trustedProxies.length > 0
      ? parseAllowlist(config.trustedProxies, 'SVC_TRUSTED_PROXIES')
      : undefined;
  const tls = await startTlsServer({
    handler: Object.assign(handler, { direct }),
    maxConnectionsPerClient: config.maxConnectionsPerClient,
    // Every client behind a trusted proxy shares its address: the proxy is not capped.
    ...(proxies
      ? {
          uncappedAddress: (address: string) => {
            const parsed = parseAddress(address);
            return parsed !== undefined && proxies.contains(parsed);
          },
        }
      : {}),
    certPath: config.tls.certPath,
    keyPath: config.tls.keyPath,
    port: config.port,
    host: config.listenAddr,
    logger,
    ...accessLogOption(createAccessLog(logger, config.accessLog)),
  });
  const host = config.listenAddr.includes(':') ? `[${config.listenAddr}]` : config.listenAddr;
  const url = `https://${host}:${tls.port}`;
  logger.info({ url, auth_type: config.auth.type, tls: 'TLSv1.3' }, 'certwright-server listening');

  let stopping = false;
  let runtime: Runtime | undefined;
  let schedulers: LeasedTask[] = [];
  let workers: WorkerHost | undefined;
  let smtp: SmtpChannel | undefined;
  const ready = (async () => {
    runtime = await openRuntime(config, logger, () => stopping);
    smtp = config.smtp ? createSmtpChannel(config.smtp) : undefined;
    const channels = new NotificationChannelRegistry(smtp ? [smtp] : []);
    const scanClient = createAdministratorClient({
      loopbackForTests: options.discovery?.allowLoopback === true,
    });
    const discoveryPolicy = {
      policy: { allowLoopback: options.discovery?.allowLoopback === true },
      ...(options.discovery?.timeoutMs ? { timeoutMs: options.discovery.timeoutMs } : {}),
    };
    const services = createServices(
      {
        storage: runtime.opened.storage,
        clock: systemClock,
        logger,
        agentSettings: config.agents,
        // Shared CRL/OCSP invalidation across instances (Redis with SVC_REDIS_URL).
        ephemeral: runtime.ephemeral,
        ...(runtime.keyCustody ? { keyCustody: runtime.keyCustody } : {}),
        // Per-instance counters of what settled here (docs/operations/observability.md, "Counters").
        onOutcome: (event) => metrics.outcome(event),
        notifications: {
          channels,
          onDead: () => metrics.notificationDead.inc(),
          // Delivered right after the change that raised it commits; the sweep is the safety net.
          queue: runtime.queue,
        },
      },
      {
        pki: {
          publicBaseUrl: config.baseUrl ?? `https://localhost:${tls.port}`,
          maxValidityDaysWithoutProfile: config.maxValidityDaysWithoutProfile,
          ...(config.crlPublishDir ? { crlPublisher: new DirectoryCrlPublisher(config.crlPublishDir) } : {}),
        },
        ...(options.administratorLoopback
          ? { acmeIssuer: { outbound: createAdministratorClient({ loopbackForTests: true }) } }
          : {}),
        // Only private ranges: no setting gives the probe loopback (docs/protocols/scep-probe.md).
        scepProbe: { allowedRanges: config.scepProbe.allowedRanges },
        webhooks: {
          // Private ranges as the operator's allowlist says; loopback never (no variable sets it).
          outbound: (ranges) => createWebhookClient(ranges, options.webhooks),
          instance: config.baseUrl ?? `https://localhost:${tls.port}`,
          node: hostname(),
          onResult: (service, result) =>
            metrics.webhookDeliveries.inc({
              service,
              outcome: result.delivered ? 'delivered' : result.retryable ? 'retry' : 'failed',
            }),
        },
        // Scan targets and health checks are destinations an administrator configured to reach
        // internal systems: public and private addresses; loopback only when a test embeds the
        // server (docs/api/discovery.md).
        discovery: { client: scanClient, concurrency: DEFAULT_SCAN_CONCURRENCY, ...discoveryPolicy },
        healthChecks: { client: scanClient, ...discoveryPolicy },
        sessions: config.sessions,
        breakglass: config.breakglass,
      },
    );
    metrics.registerPki({
      storage: runtime.opened.storage,
      clock: systemClock,
      logger,
      cacheMs: config.metrics.cacheMs,
      certificateSeriesLimit: config.metrics.certificateSeriesLimit,
    });
    if (config.demo.seed) {
      const seeded = await services.people.seedDemo();
      logger.warn({ seeded: seeded.length }, 'demo mode: demo users are present (SVC_DEMO_SEED)');
    }
    if (config.bootstrapAdmin) {
      const { subject, providerId, email } = config.bootstrapAdmin;
      const boot = await services.people.bootstrap({
        subject,
        ...(providerId ? { provider_id: providerId } : {}),
        ...(email ? { email } : {}),
      });
      if (boot.created) logger.info({ user_id: boot.user.id }, 'created the bootstrap administrator');
    }
    // Root CA keys that earlier releases stored go before anything is served (docs/operations/ca-rotation.md).
    const cleaned = await services.issuers.removeRetiredState();
    if (cleaned.length > 0) {
      logger.info({ issuer_ids: cleaned }, 'removed root CA private keys stored by an earlier release');
    }
    const checks = runtime.checks;
    full = createHandler({
      ...common,
      // Challenge responses enqueue their validation on the same queue the workers read.
      acme: { ...common.acme, queue: runtime.queue },
      services,
      readiness: async () =>
        Object.fromEntries(
          await Promise.all(Object.entries(checks).map(async ([name, check]) => [name, await check()])),
        ),
    });
    apiSegments = apiSegmentsOf(full);
    const opened = runtime.opened;
    const holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    const scheduled = {
      services,
      ephemeral: runtime.ephemeral,
      logger,
      holder,
      onTick: (t: SchedulerTick) => metrics.scheduler(t),
    };
    const tick = options.discovery?.tickMs ? { intervalMs: options.discovery.tickMs } : {};
    // A SIGTERM during start-up: start no work that close() would have to chase.
    if (stopping) return;
    workers = startWorkers(
      runtime.queue,
      workTopics(services, {
        acmeValidation: { ...acmeValidation(config, logger), challenges: full.servers!.acme.challenges },
      }),
      logger,
    );
    schedulers = [
      startNotificationRetry({ ...scheduled, intervalMs: config.notificationRetryIntervalMs }),
      startJobTimeouts(scheduled),
      startIssuanceWorker(scheduled),
      startRenewalScan({
        ...scheduled,
        ...(options.renewalScanIntervalMs ? { intervalMs: options.renewalScanIntervalMs } : {}),
      }),
      startStorageMaintenance({ ...scheduled, maintain: opened.maintain }),
      startEndpointHealth({ ...scheduled, ...tick }),
      startDiscoveryScans({ ...scheduled, ...tick }),
      startSessionGc({ ...scheduled, intervalMs: config.sessions.gcIntervalMs }),
    ];
    const rekey = startRekeyJob({
      ...scheduled,
      storage: opened.storage,
      ...(options.rekeyIntervalMs ? { intervalMs: options.rekeyIntervalMs } : {}),
    });
    if (rekey) schedulers.push(rekey);
    // Published CRLs are rebuilt when due even if nobody fetches or revokes (docs/pki.md).
    if (config.crlPublishDir) schedulers.push(startCrlRefresh(scheduled));
    if (config.backups.dir) {
      schedulers.push(
        startScheduledBackups({
          ...scheduled,
          storage: opened.storage,
          box: opened.box,
          dir: config.backups.dir,
          intervalMs: config.backups.intervalMs,
          keep: config.backups.keep,
          release: common.version?.version ?? 'unknown',
        }),
      );
    }
    logger.info(
      { url, engine: runtime.opened.storage.engine, redis: Boolean(config.redisUrl) },
      'certwright-server ready',
    );
  })();
  // A start-up failure surfaces through `ready`; keep it from being an unhandled rejection.
  ready.catch(() => {});

  return {
    port: tls.port,
    url,
    ready,
    reloadTls: () => tls.reload(),
    async close() {
      stopping = true;
      await Promise.all(schedulers.map((s) => s.stop()));
      await tls.close(config.shutdownTimeoutMs);
      // Running jobs finish and record their outcome; unclaimed ones wait for the next instance.
      await workers?.stop();
      await ready.catch(() => {});
      smtp?.close();
      await runtime?.close();
      logger.info({}, 'certwright-server stopped');
    },
  };
}

function accessLogOption(accessLog: ReturnType<typeof createAccessLog>) {
  return accessLog ? { accessLog } : {};
}

/** While starting, system routes answer and everything else is 503 (retry later). */
async function startingHandler(
  starting: CertwrightHandler,
  request: Request,
  transport: Parameters<Handler>[1],
): Promise<Response> {
  const path = new URL(request.url).pathname;
  if (starting.routes.some((route) => route.path === path)) return starting(request, transport);
  return problem({
    status: 503,
    code: 'unavailable',
    detail: 'the service is starting; retry shortly',
    requestId: randomUUID(),
    headers: { 'retry-after': '2' },
  });
}

/**
 * SVC_OIDC_CA_BUNDLE_PATH: PEM certificates trusted for identity providers besides the system
 * roots, so a provider on a private CA and one on a public CA both verify (docs/auth/oidc.md).
 */
export async function readOidcCaBundle(path: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new CertwrightError(
      'config_invalid',
      `SVC_OIDC_CA_BUNDLE_PATH: cannot read ${path} (${(error as NodeJS.ErrnoException).code})`,
      { cause: error },
    );
  }
  const pems = text.match(/-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+?-----END CERTIFICATE-----/g) ?? [];
  const anchors: string[] = [];
  for (const pem of pems) {
    try {
      new X509Certificate(pem);
    } catch {
      throw new CertwrightError(
        'config_invalid',
        `SVC_OIDC_CA_BUNDLE_PATH: ${path} holds a certificate that does not parse`,
      );
    }
    anchors.push(`${pem}\n`);
  }
  if (anchors.length === 0) {
    throw new CertwrightError('config_invalid', `SVC_OIDC_CA_BUNDLE_PATH: ${path} holds no PEM certificate`);
  }
  return [...rootCertificates, ...anchors];
}
