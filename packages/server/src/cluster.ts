import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '@certwright/core';
import { metricsHub } from './cluster-metrics.js';

/**
 * SVC_SERVER_WORKERS > 1: the primary process serves nothing itself. It forks one worker per
 * slot — each a full server instance, as several instances are (docs/operations/scaling.md) —
 * and node:cluster shares the listening socket among them. It restarts a worker that dies,
 * forwards SIGTERM/SIGINT (graceful drain) and SIGHUP (TLS reload) to every worker, and exits
 * once all have stopped. Storage migrations run in the workers under the cross-instance
 * migration lock (storage.ts), so the primary never opens the database.
 */

/** Set by the primary in each worker's environment: the worker's slot, 1..N, kept across restarts. */
const SLOT_VARIABLE = 'CERTWRIGHT_SERVER_WORKER_SLOT';
const RESTART_FIRST_MS = 1000;
const RESTART_MAX_MS = 30_000;
/** A worker that ran this long before dying was healthy: its next restart waits the first delay again. */
const STABLE_AFTER_MS = 60_000;

/** This process's worker slot ("1".."N") when it is a worker of SVC_SERVER_WORKERS, else undefined. */
export function workerSlot(): string | undefined {
  return cluster.isWorker ? process.env[SLOT_VARIABLE] : undefined;
}

export function isClusterPrimary(workers: number): boolean {
  return workers > 1 && cluster.isPrimary;
}

interface Slot {
  /** "1".."N", as the workers' own log lines and metrics name it. */
  readonly number: string;
  worker?: Worker;
  startedAt: number;
  /** This slot's worker reached listen(): a later death is restarted, not a start-up failure. */
  listened: boolean;
  delayMs: number;
  timer?: NodeJS.Timeout;
}

/**
 * Runs the primary until every worker has stopped; resolves with the process exit code: 0 when
 * all stopped cleanly after a signal, 1 when a worker failed before it ever listened (a
 * configuration or TLS problem a restart cannot fix; the worker printed why).
 */
export function runPrimary(workers: number, logger: Logger): Promise<number> {
  const log = logger.child({ role: 'primary' });
  const slots: Slot[] = Array.from({ length: workers }, (_, i) => ({
    number: String(i + 1),
    startedAt: 0,
    listened: false,
    delayMs: RESTART_FIRST_MS,
  }));
  let stopping: string | undefined;
  let failed = false;
  let settle: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => {
    settle = resolve;
  });

  const live = () => slots.filter((slot) => slot.worker !== undefined);
  // A scraped worker's /metrics answers every worker's series (cluster-metrics.ts).
  const metrics = metricsHub(() => live().flatMap((slot) => (slot.worker ? [slot.worker] : [])), log);
  const finishIfIdle = () => {
    if (stopping === undefined || live().length > 0) return;
    log.info({ workers }, 'all workers stopped');
    settle(failed ? 1 : 0);
  };
  const stopAll = (signal: string) => {
    if (stopping !== undefined) return;
    stopping = signal;
    log.info({ signal, workers: live().length }, 'stopping workers');
    for (const slot of slots) {
      clearTimeout(slot.timer);
      slot.timer = undefined;
      slot.worker?.process.kill(signal as NodeJS.Signals);
    }
    finishIfIdle();
  };

  const fork = (slot: Slot) => {
    slot.timer = undefined;
    slot.listened = false;
    slot.startedAt = Date.now();
    const worker = cluster.fork({ [SLOT_VARIABLE]: slot.number });
    slot.worker = worker;
    worker.on('message', (message: unknown) => metrics(worker, message));
    log.info({ worker: slot.number, pid: worker.process.pid }, 'worker started');
    worker.once('listening', () => {
      slot.listened = true;
    });
    worker.once('exit', (code, signal) => {
      slot.worker = undefined;
      const ranMs = Date.now() - slot.startedAt;
      const ended = { worker: slot.number, pid: worker.process.pid, code, signal };
      if (stopping !== undefined) {
        if (code !== 0) failed = true;
        log.info(ended, 'worker stopped');
        return finishIfIdle();
      }
      if (!slot.listened) {
        failed = true;
        log.error(ended, 'worker failed before it listened; stopping');
        return stopAll('SIGTERM');
      }
      if (ranMs >= STABLE_AFTER_MS) slot.delayMs = RESTART_FIRST_MS;
      log.warn({ ...ended, restart_in_ms: slot.delayMs }, 'worker exited; restarting');
      slot.timer = setTimeout(() => fork(slot), slot.delayMs);
      slot.delayMs = Math.min(slot.delayMs * 2, RESTART_MAX_MS);
    });
  };

  process.on('SIGTERM', () => stopAll('SIGTERM'));
  process.on('SIGINT', () => stopAll('SIGINT'));
  process.on('SIGHUP', () => {
    for (const slot of live()) slot.worker?.process.kill('SIGHUP');
  });
  log.info({ workers }, 'certwright-server primary: starting workers');
  for (const slot of slots) fork(slot);
  return done;
}
