import type { Worker } from 'node:cluster';
import type { Logger } from '@certwright/core';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';

/**
 * /metrics under SVC_SERVER_WORKERS > 1. The worker that is scraped asks the primary, which
 * asks every live worker for its series (as JSON) and answers the aggregate: each worker's own
 * series keep their `worker` label, and the storage-derived gauges, the same in every worker,
 * appear once. A worker that does not answer in time is left out of that scrape.
 */

const SCRAPE = 'certwright:metrics:scrape';
const COLLECT = 'certwright:metrics:collect';
const PART = 'certwright:metrics:part';
const RESULT = 'certwright:metrics:result';
/** How long the primary waits for each worker's series. */
const COLLECT_TIMEOUT_MS = 2000;
/** How long a scraped worker waits for the primary before answering its own series alone. */
const SCRAPE_TIMEOUT_MS = 5000;

type Series = MetricObjectWithValues<MetricValue<string>>[];

interface Message {
  type?: unknown;
  id?: unknown;
  body?: unknown;
  series?: unknown;
}

const isMessage = (value: unknown): value is Message => typeof value === 'object' && value !== null;

/** In a worker: answer the primary's collect requests with this worker's series. */
export function answerCollectRequests(series: () => Promise<Series>, logger: Logger): void {
  process.on('message', (message: unknown) => {
    if (!isMessage(message) || message.type !== COLLECT || typeof message.id !== 'string') return;
    const id = message.id;
    series().then(
      (values) => process.send?.({ type: PART, id, series: values }),
      (error: unknown) => {
        logger.warn({ err_message: String(error) }, 'metrics: collecting this worker’s series failed');
        process.send?.({ type: PART, id, series: [] });
      },
    );
  });
}

let nextScrape = 0;
const pendingScrapes = new Map<string, (body: string | undefined) => void>();
let listening = false;

/**
 * In a worker: the aggregate of every worker, from the primary; undefined when the primary did
 * not answer in time (the caller then answers this worker's series alone).
 */
export function scrapeThroughPrimary(): Promise<string | undefined> {
  if (!process.send) return Promise.resolve(undefined);
  if (!listening) {
    listening = true;
    process.on('message', (message: unknown) => {
      if (!isMessage(message) || message.type !== RESULT || typeof message.id !== 'string') return;
      const settle = pendingScrapes.get(message.id);
      pendingScrapes.delete(message.id);
      settle?.(typeof message.body === 'string' ? message.body : undefined);
    });
  }
  nextScrape += 1;
  const id = `${process.pid}-${nextScrape}`;
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      pendingScrapes.delete(id);
      resolve(undefined);
    }, SCRAPE_TIMEOUT_MS);
    timer.unref();
    pendingScrapes.set(id, (body) => {
      clearTimeout(timer);
      resolve(body);
    });
    process.send?.({ type: SCRAPE, id });
  });
}

/**
 * In the primary: the handler of a worker's messages that serves scrapes. `live` lists the
 * workers running now.
 */
export function metricsHub(live: () => Worker[], logger: Logger): (from: Worker, message: unknown) => void {
  let nextCollect = 0;
  const collecting = new Map<string, (series: Series) => void>();

  const collect = (worker: Worker): Promise<Series | undefined> => {
    nextCollect += 1;
    const id = String(nextCollect);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        collecting.delete(id);
        resolve(undefined);
      }, COLLECT_TIMEOUT_MS);
      collecting.set(id, (series) => {
        clearTimeout(timer);
        resolve(series);
      });
      if (!worker.send({ type: COLLECT, id })) resolve(undefined);
    });
  };

  return (from, message) => {
    if (!isMessage(message) || typeof message.id !== 'string') return;
    if (message.type === PART) {
      const settle = collecting.get(message.id);
      collecting.delete(message.id);
      settle?.(Array.isArray(message.series) ? (message.series as Series) : []);
      return;
    }
    if (message.type !== SCRAPE) return;
    const id = message.id;
    Promise.all(live().map(collect))
      .then(async (parts) => {
        const answered = parts.filter((part): part is Series => part !== undefined);
        const body = await AggregatorRegistry.aggregate(answered).metrics();
        from.send({ type: RESULT, id, body });
      })
      .catch((error: unknown) => {
        logger.warn({ err_message: String(error) }, 'metrics: aggregating the workers’ series failed');
        from.send({ type: RESULT, id });
      });
  };
}
