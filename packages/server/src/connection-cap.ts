import type { Server, Socket } from 'node:net';
import { clientKey } from '@certwright/api';
import type { Logger } from '@certwright/core';

export interface ConnectionCapOptions {
  /** Connections one client may hold open at once; 0 switches the cap off. */
  perClient: number;
  /** Addresses that are not capped (trusted proxies: every client comes through them). */
  exempt?: (address: string) => boolean;
  logger: Logger;
}

/**
 * Caps the TCP connections one client holds open at once (SVC_MAX_CONNECTIONS_PER_CLIENT), so
 * one address cannot take every socket the process has. A client counts as the rate limits
 * count it: its address, an IPv6 client per /64, IPv4-mapped as IPv4. A connection over the cap
 * is closed before the TLS handshake; each one that closes frees its place. Refusals are logged
 * at most once a minute.
 */
export function capConnectionsPerClient(server: Server, options: ConnectionCapOptions): void {
  const { perClient, exempt, logger } = options;
  if (perClient === 0) return;
  const open = new Map<string, number>();
  let lastWarning = Number.NEGATIVE_INFINITY;
  // Before the TLS server's own listener: a refused connection never starts a handshake.
  server.prependListener('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    if (exempt?.(address)) return;
    const key = clientKey(address);
    const held = open.get(key) ?? 0;
    if (held >= perClient) {
      const now = performance.now();
      if (now - lastWarning >= 60_000) {
        lastWarning = now;
        logger.warn(
          { client: key, limit: perClient },
          'connection refused: this client holds SVC_MAX_CONNECTIONS_PER_CLIENT connections',
        );
      }
      socket.destroy();
      return;
    }
    open.set(key, held + 1);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left <= 0) open.delete(key);
      else open.set(key, left);
    });
  });
}
