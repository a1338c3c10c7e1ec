import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createSecureContext } from 'node:tls';
import { CertwrightError, type DirectPath, type Handler, type Logger } from '@certwright/core';
import type { AccessLog } from './access-log.js';
import { capConnectionsPerClient } from './connection-cap.js';
import { attachDirectConnections } from './direct-connections.js';
import { answerClientErrorsWithHsts } from './hsts.js';
import { createRequestListener } from './request-listener.js';

export interface TlsServerOptions {
  /** With a direct entry, the listener asks it first (request-listener.ts). */
  handler: Handler & { direct?: DirectPath };
  certPath: string;
  keyPath: string;
  port: number;
  host: string;
  logger: Logger;
  /** Connections one client may hold at once (SVC_MAX_CONNECTIONS_PER_CLIENT); absent or 0: no cap. */
  maxConnectionsPerClient?: number;
  /** Addresses the cap does not apply to (trusted proxies). */
  uncappedAddress?: (address: string) => boolean;
  /** One line per answer on both entries (access-log.ts); absent: SVC_ACCESS_LOG=off. */
  accessLog?: AccessLog;
}

export interface TlsServer {
  readonly server: Server;
  readonly port: number;
  /** Re-reads certificate and key; a pair that does not load is refused and the old one stays. */
  reload(): Promise<boolean>;
  /** Stops accepting, lets in-flight requests finish within `graceMs`, then cuts the rest. */
  close(graceMs: number): Promise<void>;
}

/**
 * TLS 1.3 only, no plaintext listener. Client certificates are requested but not required:
 * the mTLS protocol routes verify them against their own trust bundles.
 */
export async function startTlsServer(options: TlsServerOptions): Promise<TlsServer> {
  const { logger } = options;
  const pair = await loadPair(options.certPath, options.keyPath);
  const server = createServer(
    {
      ...pair,
      minVersion: 'TLSv1.3',
      requestCert: true,
      rejectUnauthorized: false,
    },
    // Every answer of this listener tells browsers to keep to HTTPS (RFC 6797).
    createRequestListener(options.handler, logger, {
      hsts: true,
      ...(options.accessLog ? { accessLog: options.accessLog } : {}),
    }),
  );
  answerClientErrorsWithHsts(server);
  capConnectionsPerClient(server, {
    perClient: options.maxConnectionsPerClient ?? 0,
    ...(options.uncappedAddress ? { exempt: options.uncappedAddress } : {}),
    logger,
  });
  // The direct entry's requests are read on the connection itself, without node:http's
  // per-request objects; any other request hands the connection to node:http.
  const direct = options.handler.direct
    ? attachDirectConnections({
        server,
        event: 'secureConnection',
        direct: options.handler.direct,
        logger,
        hsts: true,
        ...(options.accessLog ? { accessLog: options.accessLog } : {}),
      })
    : undefined;
  server.on('tlsClientError', (error, socket) => {
    logger.debug({ err: error.message, remote: socket.remoteAddress }, 'TLS handshake failed');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(listenError(error, options.host, options.port)));
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  return {
    server,
    port,
    async reload() {
      try {
        const next = await loadPair(options.certPath, options.keyPath);
        server.setSecureContext({ ...next, minVersion: 'TLSv1.3' });
        logger.info({ cert_path: options.certPath }, 'TLS certificate and key reloaded');
        return true;
      } catch (error) {
        logger.error(
          { err: (error as Error).message, cert_path: options.certPath },
          'TLS reload refused; the previous certificate and key stay in use',
        );
        return false;
      }
    },
    close(graceMs) {
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.closeAllConnections();
          direct?.closeAll();
        }, graceMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
        direct?.closeIdle();
      });
    },
  };
}

/** A listen failure the operator fixes in the configuration names the variable to change. */
function listenError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const explained: Record<string, string> = {
    EADDRINUSE: `SVC_PORT=${port}: ${where} is already in use; stop the process that holds it or choose another port`,
    EACCES: `SVC_PORT=${port}: this process may not listen on ${where} (ports below 1024 need privileges); choose a port above 1023`,
    EADDRNOTAVAIL: `SVC_BIND_ADDRESS=${host}: no interface of this host has that address`,
  };
  const message = error.code ? explained[error.code] : undefined;
  return message ? new CertwrightError('config_invalid', message, { cause: error }) : error;
}

/** Loads and checks a pair: createSecureContext fails when the key does not match. */
async function loadPair(certPath: string, keyPath: string): Promise<{ cert: Buffer; key: Buffer }> {
  const [cert, key] = await Promise.all([
    readTlsFile(certPath, 'SVC_TLS_CERT_PATH'),
    readTlsFile(keyPath, 'SVC_TLS_KEY_PATH'),
  ]);
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    throw new CertwrightError(
      'config_invalid',
      `TLS certificate and key do not load together: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  return { cert, key };
}

async function readTlsFile(path: string, variable: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new CertwrightError(
      'config_invalid',
      `${variable}: cannot read ${path} (${(error as NodeJS.ErrnoException).code})`,
      {
        cause: error,
      },
    );
  }
}
