import type { Server } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';

/** One year: browsers keep to HTTPS for this server's name that long after any answer. */
export const HSTS_MAX_AGE_SECONDS = 31_536_000;

const PINNED = `max-age=${HSTS_MAX_AGE_SECONDS}`;
/** RFC 6797 §6.1.1: max-age=0 makes a browser forget the name instead of pinning it. */
const FORGET = 'max-age=0';

/**
 * The Strict-Transport-Security value (RFC 6797) for an answer to a request naming `host`. Every
 * answer of the TLS listener carries one. A browser keeps HSTS per name, whatever the port, so
 * pinning `localhost` for a year would also force every plain-HTTP development server on that
 * machine to HTTPS: answers to `localhost` and `*.localhost` say max-age=0 instead. IP literals
 * get the full value; browsers ignore HSTS for them (RFC 6797 §8.1.1).
 */
export function strictTransportSecurity(host: string | undefined): string {
  if (host === undefined) return PINNED;
  const name = (host.startsWith('[') ? host : host.replace(/:\d*$/, '')).toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost') ? FORGET : PINNED;
}

/** Status codes node:http answers a request it cannot parse with (its own clientError defaults). */
const CLIENT_ERROR_STATUS: Readonly<Record<string, number>> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

/**
 * node:http's answer to a request it could not parse (400, 408, 413, 431), as node writes it by
 * default — only when nothing was written on the connection yet, then the connection closes —
 * with the Strict-Transport-Security header every other answer carries.
 */
export function answerClientErrorsWithHsts(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (socket.writable && socket.bytesWritten === 0) {
      const status = CLIENT_ERROR_STATUS[error.code ?? ''] ?? 400;
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nStrict-Transport-Security: ${PINNED}\r\nConnection: close\r\n\r\n`,
      );
    }
    socket.destroy();
  });
}
