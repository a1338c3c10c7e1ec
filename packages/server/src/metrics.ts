import type { ResponseEvent } from '@certwright/api';
import type { Logger } from '@certwright/core';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { answerCollectRequests, scrapeThroughPrimary } from './cluster-metrics.js';
import { type PkiMetricsOptions, registerPkiMetrics } from './pki-metrics.js';

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
    observe(event) {
      // Route templates, never raw paths, keep label cardinality bounded.
      requests.inc({ method: event.method, route: event.route, status: String(event.status) });
      duration.observe({ method: event.method, route: event.route }, event.durationMs / 1000);
      if (event.rateLimited) rateLimited.inc({ route: event.route });
    },
    async render() {
      const body = (options.clusterWorker ? await scrapeThroughPrimary() : undefined) ?? (await local());
      return { contentType: registry.contentType, body };
    },
  };
}
