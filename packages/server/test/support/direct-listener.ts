import { createServer, type IncomingHttpHeaders, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CertwrightHandler } from '@certwright/api';
import { createRequestListener } from '../../src/request-listener.js';

/**
 * Shared by the direct-path tests (OCSP, SCEP, ACME): the server's request listener on plain
 * HTTP over a handler whose Web entry counts its calls — a request the direct entry took never
 * reaches it — and a raw HTTP/1.1 client that can send declared or chunked bodies.
 */

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface CountingListener {
  readonly server: Server;
  readonly port: number;
  /** Requests that reached the Web handler through the listener. */
  webCalls: number;
  close(): Promise<void>;
}

export async function listenCountingWebCalls(handler: CertwrightHandler): Promise<CountingListener> {
  const listener = { webCalls: 0 } as CountingListener;
  const counted = Object.assign(
    (req: Request, transport: Parameters<CertwrightHandler>[1]) => {
      listener.webCalls++;
      return handler(req, transport);
    },
    { direct: handler.direct },
  );
  const server = createServer(createRequestListener(counted));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(listener, {
    server,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
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
  return rest;
}
