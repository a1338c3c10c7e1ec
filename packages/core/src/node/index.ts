/**
 * The one Node bridge: turns node:http objects into Web-standard ones and back. The server's
 * listener and every host adapter use it, so all hosts behave byte-for-byte alike.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { PlainResponse, RequestHead, TransportContext } from '../transport.js';

export interface ToWebRequestOptions {
  /** Origin the request URL is built on, e.g. `https://localhost:8443`. */
  origin: string;
  /** Path and query to expose to the handler; defaults to `req.url`. */
  url?: string;
  /** Body bytes a host already read; otherwise the socket stream is passed through. */
  body?: Uint8Array;
}

export function toWebRequest(req: IncomingMessage, options: ToWebRequestOptions): Request {
  const method = req.method ?? 'GET';
  const init: RequestInit & { duplex?: 'half' } = { method };
  if (method !== 'GET' && method !== 'HEAD') {
    if (options.body !== undefined) {
      init.body = options.body as Uint8Array<ArrayBuffer>;
    } else {
      init.body = bodyStream(req);
      init.duplex = 'half';
    }
  }
  const request = new Request(new URL(options.url ?? req.url ?? '/', options.origin), init);
  // Filled in place: a Headers object handed to the constructor would be copied entry by entry.
  const headers = request.headers;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
  // The abort signal (the client went away before its request was complete) is made on first
  // use: linking a signal into every Request costs more than the rest of the conversion.
  let signal: AbortSignal | undefined;
  Object.defineProperty(request, 'signal', {
    configurable: true,
    enumerable: false,
    get() {
      if (signal === undefined) {
        const controller = new AbortController();
        signal = controller.signal;
        if (req.destroyed && !req.complete) controller.abort();
        else
          req.once('close', () => {
            if (!req.complete) controller.abort();
          });
      }
      return signal;
    },
  });
  return request;
}

/** Requests whose body stream a reader cancelled: their connection closes after the answer. */
const cancelledBodies = new WeakSet<IncomingMessage>();

/**
 * The request body as a Web stream that reads the socket only when pulled: at most one chunk
 * waits in the stream (back-pressure reaches the socket through `pause`), and a connection
 * that closes before the body's end errors the stream. A reader that cancels (a body over its
 * limit) stops the reading at once; the answer is still sent (a 413 reaches the client), and
 * then the connection closes instead of taking in the rest of the body.
 */
function bodyStream(req: IncomingMessage): ReadableStream<Uint8Array> {
  let finished = false;
  const onData = (chunk: Buffer) => {
    // A copy: the chunk may be a view into a larger socket buffer.
    controller.enqueue(new Uint8Array(chunk));
    if ((controller.desiredSize ?? 0) <= 0) req.pause();
  };
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        req.pause();
        req.on('data', onData);
        req.once('end', () => {
          if (finished) return;
          finished = true;
          controller.close();
        });
        // `on`, not `once`: a second error event must not go unhandled.
        req.on('error', (error) => {
          if (finished) return;
          finished = true;
          controller.error(error);
        });
        req.once('close', () => {
          if (finished) return;
          finished = true;
          controller.error(
            Object.assign(new Error('request closed before its body ended'), {
              code: 'ERR_STREAM_PREMATURE_CLOSE',
            }),
          );
        });
      },
      pull() {
        req.resume();
      },
      cancel() {
        finished = true;
        req.off('data', onData);
        req.pause();
        if (!req.complete) cancelledBodies.add(req);
      },
    },
    { highWaterMark: 1 },
  );
}

/**
 * Writes a Web Response to a Node response, streaming the body with back-pressure. Resolves to
 * the body bytes written (0 for HEAD and bodiless answers), which an access log reports.
 */
export async function sendWebResponse(
  res: ServerResponse,
  response: Response,
  method = 'GET',
): Promise<number> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, key) => {
    if (key !== 'set-cookie') headers[key] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  const req = res.req as IncomingMessage | undefined;
  const unread = req !== undefined && cancelledBodies.has(req);
  if (unread) {
    // The rest of the body is never read: the connection cannot carry another request.
    res.shouldKeepAlive = false;
    res.once('finish', () => req.destroy());
    res.once('close', () => req.destroy());
  }
  res.writeHead(response.status, response.statusText || undefined, headers);
  if (response.body === null || method === 'HEAD') {
    await response.body?.cancel();
    res.end();
    return 0;
  }
  const reader = response.body.getReader();
  let sent = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      sent += value.byteLength;
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
        return sent;
      }
    }
  } catch (error) {
    // Ending here would send the terminating chunk, and the client would take a body that
    // failed half-way for a complete one; destroying the stream makes the failure visible.
    res.destroy();
    throw error;
  }
  res.end();
  return sent;
}

/**
 * The head of a request for a `DirectPath`: method, absolute URL and the raw headers, read the
 * way `Headers.get` reads them (case-insensitive, repeated fields joined with ", "), so the
 * direct entry sees what the Web handler would.
 */
export function requestHead(req: IncomingMessage, url: string): RequestHead {
  const raw = req.rawHeaders;
  return {
    method: req.method ?? 'GET',
    url,
    headers: {
      get(name) {
        const wanted = name.toLowerCase();
        let value: string | null = null;
        for (let i = 0; i < raw.length; i += 2) {
          if ((raw[i] as string).toLowerCase() !== wanted) continue;
          const v = (raw[i + 1] as string).trim();
          value = value === null ? v : `${value}, ${v}`;
        }
        return value;
      },
    },
  };
}

/**
 * The body length a request declares, when the whole body may be read up front: a
 * Content-Length of at most `limit` (none counts as 0). Undefined for chunked bodies and
 * longer ones, which stream through the Web path with its own limits.
 */
export function declaredBodyLength(req: IncomingMessage, limit: number): number | undefined {
  if (req.headers['transfer-encoding'] !== undefined) return undefined;
  const declared = req.headers['content-length'];
  if (declared === undefined) return 0;
  const length = Number(declared);
  return Number.isSafeInteger(length) && length >= 0 && length <= limit ? length : undefined;
}

const EMPTY = new Uint8Array(0);

/** Reads a body of the declared `length` (see {@link declaredBodyLength}); rejects when the client goes away first. */
export function readDeclaredBody(req: IncomingMessage, length: number): Promise<Uint8Array> {
  if (length === 0) return Promise.resolve(EMPTY);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.once('error', reject);
    req.once('close', () => {
      if (!req.complete) reject(new Error('request closed before its body ended'));
    });
  });
}

/**
 * Writes a {@link PlainResponse} with its Content-Length (node:http would frame it chunked);
 * HEAD gets the headers only, with the length a GET would have.
 */
export function sendPlainResponse(res: ServerResponse, answer: PlainResponse, method = 'GET'): void {
  if (answer.headers['content-length'] === undefined && answer.status !== 204 && answer.status !== 304) {
    res.setHeader('content-length', answer.body.byteLength);
  }
  res.writeHead(answer.status, answer.headers);
  if (method === 'HEAD') res.end();
  else res.end(answer.body);
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
