/**
 * The one Node bridge: turns node:http objects into Web-standard ones and back. The server's
 * listener and every host adapter use it, so all hosts behave byte-for-byte alike.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { TransportContext } from '../transport.js';

export interface ToWebRequestOptions {
  /** Origin the request URL is built on, e.g. `https://localhost:8443`. */
  origin: string;
  /** Path and query to expose to the handler; defaults to `req.url`. */
  url?: string;
  /** Body bytes a host already read; otherwise the socket stream is passed through. */
  body?: Uint8Array;
}

export function toWebRequest(req: IncomingMessage, options: ToWebRequestOptions): Request {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    headers.append(req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string);
  }
  const method = req.method ?? 'GET';
  const controller = new AbortController();
  req.once('close', () => {
    if (!req.complete) controller.abort();
  });
  const init: RequestInit & { duplex?: 'half' } = { method, headers, signal: controller.signal };
  if (method !== 'GET' && method !== 'HEAD') {
    if (options.body !== undefined) {
      init.body = options.body as Uint8Array<ArrayBuffer>;
    } else {
      init.body = Readable.toWeb(req) as unknown as ReadableStream<Uint8Array>;
      init.duplex = 'half';
    }
  }
  return new Request(new URL(options.url ?? req.url ?? '/', options.origin), init);
}

/** Writes a Web Response to a Node response, streaming the body with back-pressure. */
export async function sendWebResponse(
  res: ServerResponse,
  response: Response,
  method = 'GET',
): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, key) => {
    if (key !== 'set-cookie') headers[key] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  res.writeHead(response.status, response.statusText || undefined, headers);
  if (response.body === null || method === 'HEAD') {
    await response.body?.cancel();
    res.end();
    return;
  }
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) {
        await new Promise<void>((resolve) => {
          const finish = () => {
            res.off('drain', finish);
            res.off('close', finish);
            resolve();
          };
          res.once('drain', finish);
          res.once('close', finish);
        });
      }
      if (res.destroyed) {
        await reader.cancel().catch(() => {});
        return;
      }
    }
  } catch (error) {
    // Ending here would send the terminating chunk, and the client would take a body that
    // failed half-way for a complete one; destroying the stream makes the failure visible.
    res.destroy();
    throw error;
  }
  res.end();
}

const PLAIN_HOST = /^[a-z0-9.-]+(:\d{1,5})?$|^\[[0-9a-f:.]+\](:\d{1,5})?$/i;

/**
 * The origin a host builds the request URL on. A Host header that is not a plain
 * `host[:port]` is not trusted into a URL (it could carry userinfo or a path); the local
 * address stands in for it.
 */
export function requestOrigin(
  protocol: string,
  host: string | undefined,
  localPort: number | undefined,
): string {
  if (host !== undefined && PLAIN_HOST.test(host)) return `${protocol}://${host}`;
  return `${protocol}://localhost${localPort === undefined ? '' : `:${localPort}`}`;
}

/** Reads what the connection knows: peer address, TLS version, client chain, exporter. */
export function transportFromSocket(socket: Socket): TransportContext {
  const remoteAddress = socket.remoteAddress ?? '';
  const tlsSocket = socket as TLSSocket;
  if (tlsSocket.encrypted !== true) return { remoteAddress };
  return {
    remoteAddress,
    tls: {
      protocol: tlsSocket.getProtocol(),
      clientCertificateChain: peerChain(tlsSocket),
      exportKeyingMaterial: (length, label, context) =>
        new Uint8Array(
          context
            ? tlsSocket.exportKeyingMaterial(length, label, Buffer.from(context))
            : // TLS 1.3 treats an absent context exactly like an empty one (RFC 8446 §7.5).
              tlsSocket.exportKeyingMaterial(length, label, Buffer.alloc(0)),
        ),
    },
  };
}

/** The TLS peer's certificate chain, DER, leaf first, as OpenSSL linked it (each certificate once). */
export function peerChain(socket: TLSSocket): Uint8Array[] {
  const chain: Uint8Array[] = [];
  let cert = socket.getPeerCertificate(true);
  const seen = new Set<string>();
  while (cert?.raw && !seen.has(cert.fingerprint256)) {
    seen.add(cert.fingerprint256);
    chain.push(new Uint8Array(cert.raw));
    cert = cert.issuerCertificate;
  }
  return chain;
}
