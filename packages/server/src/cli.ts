import { isCertwrightError } from '@certwright/core';
import { isClusterPrimary, runPrimary, workerSlot } from './cluster.js';
import { parseConfig } from './config.js';
import { createLogger } from './logger.js';
import { type RunningServer, type StartOptions, startServer } from './start.js';

/**
 * certwright-server: configuration comes only from SVC_* variables. `options` are the
 * in-process knobs no variable reaches (StartOptions); the CLI passes none, a test or bench
 * entry that runs the server as its own process may (bench/support/soak-server.ts).
 */
export async function runCli(options: StartOptions = {}): Promise<void> {
  let config: ReturnType<typeof parseConfig>;
  try {
    config = parseConfig(process.env);
  } catch (error) {
    process.stderr.write(`certwright-server: ${isCertwrightError(error) ? error.message : String(error)}\n`);
    process.exit(2);
  }
  if (isClusterPrimary(config.serverWorkers)) {
    // The primary only forks and supervises; every worker runs the rest of this function.
    // It ends by letting its event loop empty, so its last log lines reach a busy pipe; the
    // unref'd timer ends it only if something unexpected kept the loop alive.
    process.exitCode = await runPrimary(config.serverWorkers, createLogger(config.logLevel));
    setTimeout(() => process.exit(), 2000).unref();
    return;
  }
  const slot = workerSlot();
  const root = createLogger(config.logLevel);
  const logger = slot === undefined ? root : root.child({ worker: slot });

  // Signals are wired before start-up so a SIGTERM that arrives mid-start still drains.
  let server: RunningServer | undefined;
  let stopRequested: string | undefined;
  const stop = (signal: string) => {
    if (stopRequested && server === undefined) return;
    stopRequested = signal;
    if (!server) return;
    logger.info({ signal }, 'shutting down');
    const running = server;
    server = undefined;
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGHUP', () => {
    void server?.reloadTls();
  });

  // A configuration the operator must fix (a TLS file, a port in use) exits 2, as a bad
  // variable does; anything else that stops start-up exits 1.
  const failed = (error: unknown): never => {
    const message = isCertwrightError(error) ? error.message : (error as Error).message;
    logger.error({ err: message }, 'start-up failed');
    process.stderr.write(`certwright-server: ${message}\n`);
    process.exit(isCertwrightError(error) && error.code === 'config_invalid' ? 2 : 1);
  };
  try {
    server = await startServer(config, logger, options);
  } catch (error) {
    return failed(error);
  }
  if (stopRequested) {
    stop(stopRequested);
    return;
  }
  server.ready.catch(failed);
}
