import { createHandler } from '@certwright/api';
import type { Logger, ServiceConfig } from '@certwright/core';
import { readBuildInfo } from './build-info.js';
import { createMetrics } from './metrics.js';
import { startTlsServer } from './tls-server.js';

export interface RunningServer {
  readonly port: number;
  readonly url: string;
  /** SIGHUP: swap the TLS certificate and key; false when the new pair was refused. */
  reloadTls(): Promise<boolean>;
  /** SIGTERM: drain in-flight requests, then release storage and schedulers. */
  close(): Promise<void>;
}

/** Assembles the reference server from a parsed configuration. */
export async function startServer(config: Readonly<ServiceConfig>, logger: Logger): Promise<RunningServer> {
  const metrics = createMetrics();
  const handler = createHandler({
    auth: config.auth,
    version: await readBuildInfo(),
    logger,
    maxBodyBytes: config.maxBodyBytes,
    metrics: () => metrics.render(),
    onResponse: (event) => metrics.observe(event),
  });
  const tls = await startTlsServer({
    handler,
    certPath: config.tls.certPath,
    keyPath: config.tls.keyPath,
    port: config.port,
    host: config.listenAddr,
    logger,
  });
  const host = config.listenAddr.includes(':') ? `[${config.listenAddr}]` : config.listenAddr;
  const url = `https://${host}:${tls.port}`;
  logger.info({ url, auth_type: config.auth.type, tls: 'TLSv1.3' }, 'certwright-server listening');
  return {
    port: tls.port,
    url,
    reloadTls: () => tls.reload(),
    async close() {
      await tls.close(config.shutdownTimeoutMs);
      logger.info({}, 'certwright-server stopped');
    },
  };
}
