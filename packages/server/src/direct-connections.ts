import { type Server as HttpServer, maxHeaderSize as nodeMaxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { DirectPath, Logger, PlainResponse, TransportContext } from '@certwright/core';
import { requestOrigin } from '@certwright/core/node';
import type { AccessLog } from './access-log.js';
import { strictTransportSecurity } from './hsts.js';
import { type HeadRead, type RequestHeadFields, rawHeaderGetter, readRequestHead } from './http1-head.js';
import { lazyTransport, plainTargetPathname } from './request-listener.js';

/**
 * The direct path's own HTTP/1.1 connections (docs/architecture.md, "Direct path"). node:http
 * spends on every request a parser callback, an IncomingMessage, a ServerResponse and header
 * checks; the answers of the direct entry (OCSP above all) are small and complete, so here a
 * connection is read by a bounded head reader (http1-head.ts) and each answer written in one
 * write. The first request this does not take — another path, a chunked body, a request the
 * direct entry declines — hands the connection to node:http for good, with every byte not yet
 * answered put back (`socket.unshift`), so node:http reads that request as if it came first.
 *
 * Bounds: a head of at most the server's maxHeaderSize (431 and close beyond), a body only
 * with a Content-Length within the entry's limit, the whole request within headersTimeout of
 * its first byte (408 and close), an idle connection closed after keepAliveTimeout; the
 * response headers are node:http's (Date, Connection, Keep-Alive), and `Connection: close`
 * from the client is honoured.
 */
export interface DirectConnections {
  /** Closes connections between requests; a busy one closes after its answer. */
  closeIdle(): void;
  /** Cuts every connection still open. */
  closeAll(): void;
}

interface Options {
  /** The server whose connections are read first; its own node:http listener takes the rest. */
  server: HttpServer;
  /** 'secureConnection' for node:https (after the TLS handshake), 'connection' for node:http. */
  event: 'connection' | 'secureConnection';
  direct: DirectPath;
  logger?: Logger;
  /** Every answer carries Strict-Transport-Security (the server's TLS listener sets it). */
  hsts?: boolean;
  /** Called once per written answer (access-log.ts); absent: SVC_ACCESS_LOG=off. */
  accessLog?: AccessLog;
}

export function attachDirectConnections({
  server,
  event,
  direct,
  logger,
  hsts,
  accessLog,
}: Options): DirectConnections {
  const [nodeListener, ...others] = server.listeners(event) as ((socket: Socket) => void)[];
  if (!nodeListener || others.length > 0) throw new Error(`expected node:http's one '${event}' listener`);
  server.removeListener(event, nodeListener);
  const open = new Set<DirectConnection>();
  const shared: Shared = {
    server,
    direct,
    logger,
    maxHeadBytes: (server as { maxHeaderSize?: number }).maxHeaderSize ?? nodeMaxHeaderSize,
    handOff: (socket) => nodeListener.call(server, socket),
    open,
    closing: false,
    hsts: hsts === true,
    accessLog,
  };
  server.on(event, (socket: Socket) => {
    open.add(new DirectConnection(socket, shared));
  });
  return {
    closeIdle() {
      shared.closing = true;
      for (const connection of open) connection.closeIfIdle();
    },
    closeAll() {
      for (const connection of open) connection.socket.destroy();
    },
  };
}

interface Shared {
  server: HttpServer;
  direct: DirectPath;
  logger: Logger | undefined;
  maxHeadBytes: number;
  handOff(socket: Socket): void;
  open: Set<DirectConnection>;
  /** The server is closing: no new request on these connections. */
  closing: boolean;
  hsts: boolean;
  accessLog: AccessLog | undefined;
}

const EMPTY = Buffer.alloc(0);

/** A request head read, with what the direct entry is asked with (both depend on its bytes alone). */
interface ReadHead {
  kind: 'request';
  head: RequestHeadFields;
  /** The plain pathname of its target; undefined when URL parsing would change it (node:http's then). */
  pathname: string | undefined;
  headers: { get(name: string): string | null };
}

class DirectConnection {
  /** Bytes received and not yet answered or handed off. */
  #unread: Buffer = EMPTY;
  /** A request is being answered (or its answer waits for the socket to drain). */
  #busy = false;
  /** When the first byte of the request now being received came (performance.now()). */
  #requestStarted: number | undefined;
  #done = false;
  /** The client ended its side: answer what it sent, then close. */
  #peerEnded = false;
  /** The socket's timeout now set, so it is set again only when it changes. */
  #timeout = -1;
  /** What the connection tells the direct entry, made once: it is the same for every request. */
  #transport: TransportContext | undefined;
  /** The origin built from the last Host seen: clients send the same one on every request. */
  #host: string | undefined;
  #origin = '';
  /** The Strict-Transport-Security value for that Host, made when it changes. */
  #hstsValue = strictTransportSecurity(undefined);
  /**
   * The last head read, with its bytes: a client on a kept-alive connection sends the same head
   * again and again (same path, type and length; OCSP clients above all), and a byte compare of
   * it costs far less than reading it anew. The reading depends on the bytes alone (the head
   * ends at its first CRLF CRLF, which the copy ends with), so the reuse answers the same.
   */
  #lastHead: (ReadHead & { bytes: Buffer }) | undefined;
  readonly #onData = (chunk: Buffer) => this.#received(chunk);
  readonly #onEnd = () => {
    this.#peerEnded = true;
    if (!this.#busy) this.#close();
  };
  readonly #onError = () => this.#finish();
  readonly #onTimeout = () => this.#timedOut();

  constructor(
    readonly socket: Socket,
    private readonly shared: Shared,
  ) {
    // As node:http does (its noDelay default): an answer is one small write, sent at once.
    socket.setNoDelay(true);
    socket.on('data', this.#onData);
    socket.on('end', this.#onEnd);
    socket.on('error', this.#onError);
    socket.on('close', this.#onError);
    socket.on('timeout', this.#onTimeout);
    this.#armIdleTimer();
  }

  closeIfIdle(): void {
    if (!this.#busy && this.#unread.length === 0) this.#close();
  }

  #received(chunk: Buffer): void {
    if (this.#done) return;
    if (this.#unread.length === 0) {
      this.#unread = chunk;
      this.#requestStarted ??= performance.now();
    } else {
      this.#unread = Buffer.concat([this.#unread, chunk]);
    }
    if (this.#busy) {
      // Pipelined requests wait for the answer before them; they may not pile up unbounded.
      if (this.#unread.length > this.shared.maxHeadBytes) this.socket.pause();
      return;
    }
    void this.#serve();
  }

  /** Answers the complete requests in `#unread`, one after the other. */
  async #serve(): Promise<void> {
    this.#busy = true;
    try {
      while (!this.#done && this.#unread.length > 0) {
        if (this.#overdue()) return this.#refuse(408);
        const read = this.#readHead();
        if (read.kind === 'incomplete') break;
        if (read.kind === 'too_large') return this.#refuse(431);
        if (read.kind === 'other') return this.#handOff();
        const { head, pathname } = read;
        const limit =
          pathname === undefined ? undefined : this.shared.direct.bodyLimit(head.method, pathname);
        if (pathname === undefined || limit === undefined || head.contentLength > limit)
          return this.#handOff();
        const length = head.headLength + head.contentLength;
        if (this.#unread.length < length) break;
        const answered = await this.#answer(
          head,
          pathname,
          read.headers,
          this.#unread.subarray(head.headLength, length),
          this.#requestStarted ?? performance.now(),
        );
        if (this.#done) return;
        // Declined after all: node:http reads this request from its first byte (`#unread`
        // still starts with it; bytes that came meanwhile were appended).
        if (!answered) return this.#handOff();
        // Bytes that came while answering were appended to `#unread`; drop the request's own.
        this.#unread = this.#unread.subarray(length);
        this.#requestStarted = this.#unread.length > 0 ? performance.now() : undefined;
        if (head.close || this.shared.closing || this.#peerEnded) {
          if (this.#unread.length === 0 || head.close || this.shared.closing) return this.#close();
        }
        if (this.socket.writableNeedDrain) await this.#drained();
      }
    } catch (error) {
      // Only a fault of ours lands here (answers are produced, not thrown): log, cut.
      this.shared.logger?.error({ err: error }, 'direct connection failed');
      this.socket.destroy();
      this.#finish();
      return;
    } finally {
      this.#busy = false;
    }
    if (this.#done) return;
    if ((this.shared.closing || this.#peerEnded) && this.#unread.length === 0) return this.#close();
    this.socket.resume();
    this.#armIdleTimer();
  }

  /** The head at the start of `#unread`: the last one again when the bytes are the same. */
  #readHead(): Exclude<HeadRead, { kind: 'request' }> | ReadHead {
    const unread = this.#unread;
    const last = this.#lastHead;
    if (last !== undefined) {
      const n = last.bytes.length;
      if (unread.length >= n && unread.compare(last.bytes, 0, n, 0, n) === 0) return last;
    }
    const head = readRequestHead(unread, this.shared.maxHeadBytes);
    if (head.kind !== 'request') return head;
    const read: ReadHead = {
      kind: 'request',
      head,
      pathname: plainTargetPathname(head.target),
      headers: rawHeaderGetter(head.rawHeaders),
    };
    // A copy: `#unread` is a view of a socket chunk that is not ours to keep.
    this.#lastHead = { ...read, bytes: Buffer.from(unread.subarray(0, head.headLength)) };
    return read;
  }

  /** Asks the direct entry; writes its answer and returns true, or false when it declines. */
  async #answer(
    head: RequestHeadFields,
    pathname: string,
    headers: ReadHead['headers'],
    body: Buffer,
    started: number,
  ): Promise<boolean> {
    if (head.host !== this.#host) {
      this.#host = head.host;
      this.#hstsValue = strictTransportSecurity(head.host);
      this.#origin = requestOrigin('https', head.host, this.socket.localPort);
    }
    this.#transport ??= lazyTransport(this.socket);
    let answer: PlainResponse | Response | undefined;
    try {
      answer = await this.shared.direct.answer(
        {
          method: head.method,
          url: this.#origin + head.target,
          pathname,
          headers,
        },
        body,
        this.#transport,
      );
    } catch (error) {
      this.shared.logger?.error({ err: error }, 'request failed outside the handler error mapping');
      answer = INTERNAL_ERROR;
    }
    if (answer === undefined) return false;
    const plain = answer instanceof Response ? await plainOf(answer) : answer;
    const bytes = this.#write(plain, head.method === 'HEAD', head.close || this.shared.closing);
    // The head reader takes HTTP/1.1 requests only (http1-head.ts); others go to node:http.
    this.shared.accessLog?.(answer, {
      method: head.method,
      status: plain.status,
      bytes,
      started,
      protocol: 'HTTP/1.1',
      remoteAddress: this.socket.remoteAddress,
    });
    return true;
  }

  /** Writes the answer in one write; returns the body bytes written. */
  #write(answer: PlainResponse, headOnly: boolean, close: boolean): number {
    let head = `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? 'unknown'}\r\n`;
    for (const name in answer.headers) head += `${name}: ${answer.headers[name]}\r\n`;
    // node:http states no length for HEAD or a status without content (RFC 9110 §8.6).
    if (answer.headers['content-length'] === undefined && !headOnly && !WITHOUT_CONTENT.has(answer.status)) {
      head += `content-length: ${answer.body.byteLength}\r\n`;
    }
    if (this.shared.hsts) head += `strict-transport-security: ${this.#hstsValue}\r\n`;
    head += `Date: ${httpDate()}\r\n`;
    head += close
      ? 'Connection: close\r\n\r\n'
      : `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(this.shared.server.keepAliveTimeout / 1000)}\r\n\r\n`;
    const headLength = Buffer.byteLength(head, 'latin1');
    const bodyLength = headOnly ? 0 : answer.body.byteLength;
    // One buffer, one write: one TLS record and one syscall per answer.
    const out = Buffer.allocUnsafe(headLength + bodyLength);
    out.write(head, 0, 'latin1');
    if (bodyLength > 0) out.set(answer.body, headLength);
    this.socket.write(out);
    return bodyLength;
  }

  #drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      this.socket.on('drain', done);
      this.socket.on('close', done);
    });
  }

  /** The request being received has taken longer than headersTimeout since its first byte. */
  #overdue(): boolean {
    return (
      this.#requestStarted !== undefined &&
      performance.now() - this.#requestStarted > this.shared.server.headersTimeout
    );
  }

  /**
   * Between requests the socket may idle for keepAliveTimeout; a request begun must keep
   * coming (the whole of it within headersTimeout, checked as its bytes arrive and here).
   */
  #armIdleTimer(): void {
    const { keepAliveTimeout, headersTimeout } = this.shared.server;
    const timeout = this.#unread.length === 0 ? keepAliveTimeout : headersTimeout;
    if (timeout !== this.#timeout) {
      this.#timeout = timeout;
      this.socket.setTimeout(timeout);
    }
  }

  #timedOut(): void {
    // A client that stopped reading its answers does not keep the socket either.
    if (this.socket.writableNeedDrain) this.#finish();
    else if (this.#busy) return;
    else if (this.#unread.length > 0) this.#refuse(408);
    else this.#close();
  }

  /** An answer of node:http's kind for a request it would refuse, then close. */
  #refuse(status: 408 | 431): void {
    this.#write({ status, headers: {}, body: EMPTY }, false, true);
    this.#close();
  }

  #handOff(): void {
    this.#detach();
    const { socket } = this;
    socket.setTimeout(0);
    if (this.#unread.length > 0) socket.unshift(this.#unread);
    this.#unread = EMPTY;
    this.shared.handOff(socket);
    // node:http reads in flowing mode; a pause of ours (pipelined bytes) must not stay.
    socket.resume();
  }

  #close(): void {
    this.#detach();
    this.socket.end();
    // A client that never reads its answer does not keep the socket.
    this.socket.setTimeout(this.shared.server.keepAliveTimeout, () => this.socket.destroy());
  }

  #finish(): void {
    if (this.#done) return;
    this.#detach();
    this.socket.destroy();
  }

  #detach(): void {
    this.#done = true;
    this.shared.open.delete(this);
    const { socket } = this;
    socket.off('data', this.#onData);
    socket.off('end', this.#onEnd);
    socket.off('error', this.#onError);
    socket.off('close', this.#onError);
    socket.off('timeout', this.#onTimeout);
    // After the handover or the close, errors (a reset) are the next owner's or nobody's.
    socket.on('error', ignore);
  }
}

const ignore = () => {};
const WITHOUT_CONTENT = new Set([204, 304]);

const INTERNAL_ERROR: PlainResponse = {
  status: 500,
  headers: { 'content-type': 'application/problem+json' },
  body: Buffer.from(JSON.stringify({ type: 'about:blank', title: 'Internal Server Error', status: 500 })),
};

/** A small Web Response of the direct entry (an error, a rate limit) as written bytes. */
async function plainOf(response: Response): Promise<PlainResponse> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, key) => {
    headers[key] = value;
  });
  return { status: response.status, headers, body: new Uint8Array(await response.arrayBuffer()) };
}

let dateSecond = -1;
let dateText = '';
/** The Date header's value (RFC 9110 §5.6.7), built once a second as node:http does. */
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}
