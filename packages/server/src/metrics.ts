import type { ResponseEvent } from '@certwright/api';
import type { LifecycleOutcome, Logger } from '@certwright/core';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { answerCollectRequests, scrapeThroughPrimary } from './cluster-metrics.js';
import { type PkiMetricsOptions, registerPkiMetrics } from './pki-metrics.js';
import type { SchedulerTick } from './schedulers/index.js';

export interface ServerMetrics {
  /** This process's series: requests, deliveries, the runtime; a worker's carry its slot. */
  registry: Registry;
  /** Series read from storage (docs/operations/observability.md): the same on every instance. */
  shared: Registry;
  /** Adds the storage-derived gauges once storage is open. */
  registerPki(options: PkiMetricsOptions): void;
  observe(event: ResponseEvent): void;
  /** Incremented each time a notification becomes dead. */
  notificationDead: Counter;
  /** Webhook delivery attempts (tests included) by kind and outcome: delivered, retry, failed. */
  webhookDeliveries: Counter;
  /** Counts an issuance, renewal, revocation or enrollment that settled in this process. */
  outcome(event: LifecycleOutcome): void;
  /** Counts a scheduler tick of this process: run (ok, failed) or skipped for another instance's lease. */
  scheduler(tick: SchedulerTick): void;
  render(): Promise<{ contentType: string; body: string }>;
}

export interface MetricsOptions {
  /** This process is a worker of SVC_SERVER_WORKERS: /metrics answers every worker's series. */
  clusterWorker?: boolean;
  logger?: Logger;
}

/** `labels` go on every series of this process (a worker's slot under SVC_SERVER_WORKERS). */
export function createMetrics(
  labels: Record<string, string> = {},
  options: MetricsOptions = {},
): ServerMetrics {
  const registry = new Registry();
  registry.setDefaultLabels(labels);
  const shared = new Registry();
  const series = async () => [...(await registry.getMetricsAsJSON()), ...(await shared.getMetricsAsJSON())];
  const local = async () => `${await registry.metrics()}${await shared.metrics()}`;
  if (options.clusterWorker && options.logger) answerCollectRequests(series, options.logger);
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'svc_http_requests_total',
    help: 'HTTP requests by method, route template and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP request duration by method and route template',
    labelNames: ['method', 'route'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  const rateLimited = new Counter({
    name: 'svc_http_rate_limited_total',
    help: 'Requests refused by a per-client limit (429), by route template',
    labelNames: ['route'],
    registers: [registry],
  });
  const notificationDead = new Counter({
    name: 'svc_notification_dead_total',
    help: 'Notifications that exhausted their retry budget and became dead',
    registers: [registry],
  });
  const webhookDeliveries = new Counter({
    name: 'svc_webhook_deliveries_total',
    help: 'Webhook delivery attempts by kind (service) and outcome: delivered, retry (will be retried), failed (not retried)',
    labelNames: ['service', 'outcome'],
    registers: [registry],
  });
  const counter = (name: string, help: string, labelNames: string[]) =>
    new Counter({ name, help, labelNames, registers: [registry] });
  const lifecycle = {
    issuance: counter(
      'certwright_certificate_issuances_total',
      'Issuance attempts of managed certificates (jobs) by issuer id and outcome: success, failure',
      ['issuer', 'outcome'],
    ),
    renewal: counter(
      'certwright_certificate_renewals_total',
      'Renewal attempts by issuer id and outcome: success, failure',
      ['issuer', 'outcome'],
    ),
    revocation: counter(
      'certwright_certificate_revocations_total',
      'Certificates revoked (success) and refused or failed revocations (failure) by issuer id',
      ['issuer', 'outcome'],
    ),
  };
  const enrollments = counter(
    'certwright_enrollments_total',
    'Enrollments by protocol (acme, est, scep) and outcome: success, failure',
    ['protocol', 'outcome'],
  );
  // Every protocol and outcome from the start: a rate() over a series that appears late misses its first increase.
  for (const protocol of ['acme', 'est', 'scep']) {
    for (const outcome of ['success', 'failure']) enrollments.inc({ protocol, outcome }, 0);
  }
  const ocspResponses = counter(
    'certwright_ocsp_responses_total',
    'OCSP answers by RFC 6960 responseStatus: successful, malformedRequest, internalError, tryLater, unauthorized',
    ['status'],
  );
  for (const status of new Set(Object.values(OCSP_RESPONSE_STATUS))) ocspResponses.inc({ status }, 0);
  const ocspDuration = new Histogram({
    name: 'certwright_ocsp_response_duration_seconds',
    help: 'Time to answer an OCSP request (POST or GET), from the request to the answer built',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  // The CRLs this process built: with several instances each reports its own (max over them is
  // the freshest a relying party can get).
  const crlGauge = (name: string, help: string) =>
    new Gauge({ name, help, labelNames: ['issuer', 'crl'], registers: [registry] });
  const crlBytes = crlGauge(
    'certwright_crl_bytes',
    'Size (DER bytes) of the last CRL this process built, by issuer id and crl (crl, delta)',
  );
  const crlThisUpdate = crlGauge(
    'certwright_crl_this_update_timestamp_seconds',
    'thisUpdate of the last CRL this process built (Unix seconds), by issuer id and crl (crl, delta)',
  );
  const crlNextUpdate = crlGauge(
    'certwright_crl_next_update_timestamp_seconds',
    'nextUpdate of the last CRL this process built (Unix seconds), by issuer id and crl (crl, delta)',
  );
  const crlPublications = counter(
    'certwright_crl_publications_total',
    'CRLs handed to the publishing target (SVC_CRL_PUBLISH_DIR) by issuer id, crl (crl, delta) and outcome after retries',
    ['issuer', 'crl', 'outcome'],
  );
  const schedulerTicks = counter(
    'certwright_scheduler_ticks_total',
    'Scheduler ticks of this process by scheduler and outcome: ok, failed, skipped (another instance held the lease)',
    ['scheduler', 'outcome'],
  );
  const schedulerDuration = new Histogram({
    name: 'certwright_scheduler_tick_duration_seconds',
    help: 'Duration of the scheduler ticks this process ran, by scheduler',
    labelNames: ['scheduler'],
    buckets: [0.01, 0.05, 0.25, 1, 5, 30, 120, 600],
    registers: [registry],
  });
  const schedulerLastOk = new Gauge({
    name: 'certwright_scheduler_last_success_timestamp_seconds',
    help: 'When a tick of the scheduler last ended without error in this process (Unix seconds); max over instances is the fleet’s',
    labelNames: ['scheduler'],
    registers: [registry],
  });
  let pkiRegistered = false;
  return {
    registry,
    shared,
    registerPki(pki) {
      if (pkiRegistered) return;
      pkiRegistered = true;
      registerPkiMetrics(shared, pki);
    },
    notificationDead,
    webhookDeliveries,
    outcome(event) {
      if (event.kind === 'enrollment') {
        enrollments.inc({ protocol: event.protocol, outcome: event.outcome });
        return;
      }
      if (event.kind === 'crl_built') {
        const labels = { issuer: event.issuerId, crl: event.crl };
        crlBytes.set(labels, event.bytes);
        crlThisUpdate.set(labels, event.thisUpdate.getTime() / 1000);
        crlNextUpdate.set(labels, event.nextUpdate.getTime() / 1000);
        return;
      }
      if (event.kind === 'crl_publication') {
        crlPublications.inc({ issuer: event.issuerId, crl: event.crl, outcome: event.outcome });
        return;
      }
      lifecycle[event.kind].inc({ issuer: event.issuerId, outcome: event.outcome }, event.count ?? 1);
    },
    scheduler(tick) {
      // `scheduler:renewal-scan` → `renewal-scan`: the lease prefix says nothing to a dashboard.
      const scheduler = tick.name.replace(/^scheduler:/, '');
      schedulerTicks.inc({ scheduler, outcome: tick.ran ? (tick.ok ? 'ok' : 'failed') : 'skipped' });
      if (!tick.ran) return;
      schedulerDuration.observe({ scheduler }, tick.seconds);
      if (tick.ok) schedulerLastOk.set({ scheduler }, Date.now() / 1000);
    },
    observe(event) {
      // Route templates, never raw paths, keep label cardinality bounded.
      requests.inc({ method: event.method, route: event.route, status: String(event.status) });
      duration.observe({ method: event.method, route: event.route }, event.durationMs / 1000);
      if (event.rateLimited) rateLimited.inc({ route: event.route });
      if (event.operationId !== undefined && OCSP_OPERATIONS.has(event.operationId)) {
        ocspResponses.inc({ status: ocspResponseStatus(event.status) });
        ocspDuration.observe(event.durationMs / 1000);
      }
    },
    async render() {
      const body = (options.clusterWorker ? await scrapeThroughPrimary() : undefined) ?? (await local());
      return { contentType: registry.contentType, body };
    },
  };
}

/** The OCSP operations that answer an OCSPResponse (the `/serial/{hex}` route answers JSON). */
const OCSP_OPERATIONS = new Set(['postOcspRequest', 'getOcspRequest']);

/**
 * The RFC 6960 §4.2.1 responseStatus behind each HTTP status the OCSP routes answer with: the
 * responder maps them one to one (packages/protocols/src/ocsp), a rate-limited client gets 429
 * with a `tryLater` body.
 */
const OCSP_RESPONSE_STATUS: Readonly<Record<number, string>> = {
  200: 'successful',
  400: 'malformedRequest',
  413: 'malformedRequest',
  // A Content-Type other than application/ocsp-request: refused before parsing, as malformed.
  415: 'malformedRequest',
  404: 'unauthorized',
  429: 'tryLater',
  503: 'tryLater',
  500: 'internalError',
};

function ocspResponseStatus(httpStatus: number): string {
  return OCSP_RESPONSE_STATUS[httpStatus] ?? (httpStatus < 500 ? 'malformedRequest' : 'internalError');
}
