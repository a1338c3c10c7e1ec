import type { EphemeralStore, Logger } from '@certwright/core';

export interface LeasedTaskOptions {
  /** Lease name shared by every instance, e.g. `scheduler:notification-retry`. */
  name: string;
  /** This instance's identity (hostname + pid + random) so leases tell holders apart. */
  holder: string;
  intervalMs: number;
  /**
   * How long a tick's lease is held (default one interval): longer than the interval, it spaces
   * runs by the lease while a frequent tick still notices soon when one is due.
   */
  leaseMs?: number;
  ephemeral: EphemeralStore;
  logger: Logger;
  /** The work of one tick; its result is logged at debug level. */
  run(): Promise<unknown>;
  /** Told of every tick: whether this instance ran it (it held the lease), how it ended. */
  onTick?: TickObserver;
}

/** One tick of a leased task as {@link TickObserver}s see it. */
export interface SchedulerTick {
  /** The lease name, e.g. `scheduler:renewal-scan`. */
  name: string;
  /** False when another instance held the lease: this one skipped the tick. */
  ran: boolean;
  /** The work ended without throwing (always false when it did not run). */
  ok: boolean;
  /** The work's duration; 0 when it did not run. */
  seconds: number;
}
export type TickObserver = (tick: SchedulerTick) => void;

/** What each of the server's schedulers is started with, beside its own settings. */
export type SchedulerContext = Pick<LeasedTaskOptions, 'holder' | 'ephemeral' | 'logger' | 'onTick'>;

export interface LeasedTask {
  /**
   * One tick: takes the lease (or skips when another instance holds it), runs the work, and
   * keeps the lease until it expires, so no other instance runs the same tick. Resolves to
   * whether this instance ran it. Never rejects: failures are logged and retried next tick.
   */
  tick(): Promise<boolean>;
  /** Stops the interval and waits for a tick in progress. */
  stop(): Promise<void>;
}

/**
 * Runs `run` every `intervalMs` on at most one instance per tick. The lease lasts one interval
 * (at least one second) and is renewed while the work runs: held past the work's end on
 * purpose, so that an instance whose timer fires slightly later cannot run the same tick again.
 * Ticks never overlap within a process, nor across instances.
 */
export function startLeasedTask(options: LeasedTaskOptions): LeasedTask {
  const log = options.logger.child({ scheduler: options.name });
  const leaseMs = Math.max(1000, Math.floor(options.leaseMs ?? options.intervalMs));
  let running: Promise<boolean> | null = null;
  let stopped = false;
  // An observer's own failure must not turn a finished tick into a failed one.
  const observe = (t: SchedulerTick) => {
    try {
      options.onTick?.(t);
    } catch (error) {
      log.warn({ err: error }, 'scheduler tick observer failed');
    }
  };

  const once = async (): Promise<boolean> => {
    let heartbeat: NodeJS.Timeout | undefined;
    let started: number | undefined;
    try {
      if (!(await options.ephemeral.acquireLease(options.name, options.holder, leaseMs))) {
        observe({ name: options.name, ran: false, ok: false, seconds: 0 });
        return false;
      }
      started = performance.now();
      // A tick that outlasts its lease keeps it: renewed every third of it while the work runs,
      // so a slow tick (a loaded machine, a long scan) is never joined by another instance.
      heartbeat = setInterval(
        () => {
          options.ephemeral.renewLease(options.name, options.holder, leaseMs).then(
            (held) => {
              if (!held)
                log.warn({}, 'scheduler lease lost during a tick; another instance may run the next one');
            },
            (error: unknown) => log.warn({ err: error }, 'scheduler lease could not be renewed'),
          );
        },
        Math.max(100, Math.floor(leaseMs / 3)),
      );
      heartbeat.unref();
      const result = await options.run();
      log.debug({ result }, 'scheduler tick done');
      observe({ name: options.name, ran: true, ok: true, seconds: (performance.now() - started) / 1000 });
      return true;
    } catch (error) {
      log.error({ err: error }, 'scheduler tick failed; retrying next tick');
      const seconds = started === undefined ? 0 : (performance.now() - started) / 1000;
      observe({ name: options.name, ran: started !== undefined, ok: false, seconds });
      return false;
    } finally {
      clearInterval(heartbeat);
    }
  };
  const tick = (): Promise<boolean> => {
    if (stopped) return Promise.resolve(false);
    // A slow tick is not stacked: the timer's next firing joins the one in progress.
    running ??= once().finally(() => {
      running = null;
    });
    return running;
  };
  const timer = setInterval(() => void tick(), options.intervalMs);
  timer.unref();
  return {
    tick,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
