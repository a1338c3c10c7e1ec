import type { ResponseEvent } from '@certwright/api';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

export interface ServerMetrics {
  registry: Registry;
  observe(event: ResponseEvent): void;
  /** Incremented each time a notification becomes dead. */
  notificationDead: Counter;
  /** Webhook delivery attempts (tests included) by kind and outcome: delivered, retry, failed. */
  webhookDeliveries: Counter;
  render(): Promise<{ contentType: string; body: string }>;
}

/** `labels` go on every series (a worker's slot under SVC_SERVER_WORKERS). */
export function createMetrics(labels: Record<string, string> = {}): ServerMetrics {
  const registry = new Registry();
  registry.setDefaultLabels(labels);
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
  return {
    registry,
    notificationDead,
    webhookDeliveries,
    observe(event) {
      // Route templates, never raw paths, keep label cardinality bounded.
      requests.inc({ method: event.method, route: event.route, status: String(event.status) });
      duration.observe({ method: event.method, route: event.route }, event.durationMs / 1000);
      if (event.rateLimited) rateLimited.inc({ route: event.route });
    },
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
