import { createServer, type IncomingHttpHeaders, request, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import type { CertwrightHandler } from '@certwright/api';
import type { AccessLog } from '../../src/access-log.js';
import { attachDirectConnections, type DirectConnections } from '../../src/direct-connections.js';
import { createRequestListener } from '../../src/request-listener.js';

/**
 * Shared by the direct-path tests (OCSP, SCEP, ACME): the server's listener — its direct
 * connections first (direct-connections.ts), node:http's request listener for the rest — on
 * plain HTTP over a handler whose Web entry counts its calls — a request the direct entry took
 * never reaches it — and a raw HTTP/1.1 client that can send declared or chunked bodies.
 */

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface CountingListener {
  readonly server: Server;
  readonly port: number;
  readonly connections: DirectConnections;
  /** Requests that reached the Web handler through the listener. */
  webCalls: number;
  close(): Promise<void>;
}

export async function listenCountingWebCalls(
  handler: CertwrightHandler,
  options: { accessLog?: AccessLog } = {},
): Promise<CountingListener> {
  const listener = { webCalls: 0 } as CountingListener;
  const counted = Object.assign(
    (req: Request, transport: Parameters<CertwrightHandler>[1]) => {
      listener.webCalls++;
      return handler(req, transport);
    },
    { direct: handler.direct },
  );
  const server = createServer(createRequestListener(counted, undefined, options));
  const connections = attachDirectConnections({
    server,
    event: 'connection',
    direct: handler.direct,
    ...options,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(listener, {
    server,
    connections,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        connections.closeAll();
      }),
  });
}

/** One request; a body is sent with its Content-Length, or in two chunks when `chunked`. */
export function sendRaw(
  port: number,
  method: string,
  path: string,
  options: { body?: Uint8Array; headers?: Record<string, string>; chunked?: boolean } = {},
): Promise<Reply> {
  const { body, chunked } = options;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: {
          ...(body && !chunked ? { 'content-length': String(body.length) } : {}),
          ...options.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      },
    );
    req.on('error', reject);
    if (body && chunked) {
      req.write(body.subarray(0, 5));
      req.end(body.subarray(5));
    } else if (body) req.end(body);
    else req.end();
  });
}

/** Headers both entries must agree on (date and request id differ per answer by design). */
export function comparable(headers: Record<string, unknown>): Record<string, unknown> {
  const { date: _date, 'x-request-id': _id, connection: _c, 'keep-alive': _k, ...rest } = headers;
  // max-age counts down to the answer's nextUpdate: two answers a moment apart may differ by a
  // second. maxAge() reads the number for the tests that compare it.
  const cacheControl = rest['cache-control'];
  if (typeof cacheControl === 'string')
    rest['cache-control'] = cacheControl.replace(/max-age=\d+/, 'max-age=…');
  return rest;
}

/** The max-age of a Cache-Control header, in seconds. */
export function maxAge(headers: Record<string, unknown>): number {
  const match = /max-age=(\d+)/.exec(String(headers['cache-control']));
  if (!match) throw new Error(`no max-age in ${String(headers['cache-control'])}`);
  return Number(match[1]);
}

/** A raw keep-alive connection: bytes written as given, replies read in order (Content-Length or chunked bodies). */
export interface RawConnection {
  write(bytes: string | Uint8Array): void;
  /** The next complete reply; rejects when the connection closes first. */
  reply(): Promise<Reply>;
  /** Resolves when the server closed the connection. */
  readonly closed: Promise<void>;
  destroy(): void;
}

export async function openRaw(port: number): Promise<RawConnection> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let unread = Buffer.alloc(0);
  let ended = false;
  let wake: (() => void) | undefined;
  socket.on('data', (chunk: Buffer) => {
    unread = Buffer.concat([unread, chunk]);
    wake?.();
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  void closed.then(() => {
    ended = true;
    wake?.();
  });
  socket.on('error', () => {});
  const take = (): Reply | undefined => {
    const end = unread.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const [statusLine, ...lines] = unread.subarray(0, end).toString('latin1').split('\r\n');
    const headers: IncomingHttpHeaders = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const status = Number(statusLine!.split(' ')[1]);
    if (headers['transfer-encoding'] === 'chunked') {
      const chunks: Buffer[] = [];
      let at = end + 4;
      for (;;) {
        const lineEnd = unread.indexOf('\r\n', at);
        if (lineEnd < 0) return undefined;
        const size = Number.parseInt(unread.subarray(at, lineEnd).toString('latin1'), 16);
        if (unread.length < lineEnd + 2 + size + 2) return undefined;
        chunks.push(unread.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
        if (size === 0) break;
      }
      unread = unread.subarray(at);
      return { status, headers, body: Buffer.concat(chunks) };
    }
    const length = Number(headers['content-length'] ?? 0);
    if (unread.length < end + 4 + length) return undefined;
    const body = unread.subarray(end + 4, end + 4 + length);
    unread = unread.subarray(end + 4 + length);
    return { status, headers, body: Buffer.from(body) };
  };
  return {
    write: (bytes) => socket.write(bytes),
    async reply() {
      for (;;) {
        const reply = take();
        if (reply) return reply;
        if (ended) throw new Error('connection closed before a reply');
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    },
    closed,
    destroy: () => socket.destroy(),
  };
}

/** The bytes of one HTTP/1.1 request with a Content-Length body. */
export function requestBytes(
  method: string,
  path: string,
  body?: Uint8Array,
  headers: Record<string, string> = {},
): Buffer {
  let head = `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  if (body) head += `Content-Length: ${body.length}\r\n`;
  return Buffer.concat([Buffer.from(`${head}\r\n`, 'latin1'), body ?? Buffer.alloc(0)]);
}
