import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { DirectPath, Handler, Logger, PlainResponse, TransportContext } from '@certwright/core';
import {
  declaredBodyLength,
  readDeclaredBody,
  requestHead,
  requestOrigin,
  sendPlainResponse,
  sendWebResponse,
  toWebRequest,
  transportFromSocket,
} from '@certwright/core/node';
import type { AccessLog } from './access-log.js';
import { strictTransportSecurity } from './hsts.js';

export interface RequestListenerOptions {
  /** Every answer carries Strict-Transport-Security (the server's TLS listener sets it). */
  hsts?: boolean;
  /** Called once per written answer (access-log.ts); absent: SVC_ACCESS_LOG=off. */
  accessLog?: AccessLog;
}

/**
 * The server's own Node listener: hands each request to a certwright handler unchanged.
 * The handler produces every response, errors included; this only guards against a
 * handler that throws anyway, answering 500 without detail.
 *
 * A handler with a direct entry (createHandler's, for OCSP, SCEP and ACME) is asked first for the requests
 * it names: their small body is read whole and the answer written as bytes, without a Web
 * Request or Response (docs/architecture.md, "Direct path"). What the direct entry declines
 * goes to the handler with the body already read.
 */
export function createRequestListener(
  handler: Handler & { direct?: DirectPath },
  logger?: Logger,
  options: RequestListenerOptions = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  const { direct } = handler;
  const hsts = options.hsts === true;
  const { accessLog } = options;
  const logWritten = (
    req: IncomingMessage,
    started: number,
    answer: Response | PlainResponse,
    bytes: number,
  ): void =>
    accessLog?.(answer, {
      method: req.method ?? 'GET',
      status: answer.status,
      bytes,
      started,
      protocol: `HTTP/${req.httpVersion}`,
      remoteAddress: req.socket.remoteAddress,
    });

  const fail = (res: ServerResponse) => (error: unknown) => {
    logger?.error({ err: error }, 'request failed outside the handler error mapping');
    if (!res.headersSent) {
      res.writeHead(500, { 'content-type': 'application/problem+json' });
      res.end(JSON.stringify({ type: 'about:blank', title: 'Internal Server Error', status: 500 }));
    } else {
      res.destroy();
    }
  };

  const viaWeb = (
    req: IncomingMessage,
    res: ServerResponse,
    origin: string,
    started: number,
    body?: Uint8Array,
  ) =>
    handler(
      toWebRequest(req, { origin, ...(body !== undefined ? { body } : {}) }),
      transportFromSocket(req.socket),
    ).then(async (response) => {
      const bytes = await sendWebResponse(res, response, req.method);
      logWritten(req, started, response, bytes);
    });

  /** The request's URL when the direct entry takes its kind, with the body length to read. */
  const directTarget = (
    req: IncomingMessage,
    origin: string,
  ): { href: string; pathname: string; length: number } | undefined => {
    if (!direct) return undefined;
    const target = req.url ?? '/';
    let href: string;
    let pathname = plainTargetPathname(target);
    if (pathname !== undefined) {
      href = origin + target;
    } else {
      try {
        const url = new URL(target, origin);
        href = url.href;
        pathname = url.pathname;
      } catch {
        return undefined;
      }
    }
    const limit = direct.bodyLimit(req.method ?? 'GET', pathname);
    const length = limit === undefined ? undefined : declaredBodyLength(req, limit);
    return length === undefined ? undefined : { href, pathname, length };
  };

  return (req, res) => {
    // Set before the handler answers: writeHead keeps it, whichever way the answer is written.
    if (hsts) res.setHeader('strict-transport-security', strictTransportSecurity(req.headers.host));
    const started = performance.now();
    const origin = requestOrigin('https', req.headers.host, req.socket.localPort);
    const target = directTarget(req, origin);
    if (!target || !direct) {
      Promise.resolve()
        .then(() => viaWeb(req, res, origin, started))
        .catch(fail(res));
      return;
    }
    readDeclaredBody(req, target.length).then(
      (body) =>
        direct
          .answer(
            { ...requestHead(req, target.href), pathname: target.pathname },
            body,
            lazyTransport(req.socket),
          )
          .then(async (answer) => {
            if (answer === undefined) return viaWeb(req, res, origin, started, body);
            if (answer instanceof Response) {
              logWritten(req, started, answer, await sendWebResponse(res, answer, req.method));
              return;
            }
            sendPlainResponse(res, answer, req.method);
            logWritten(req, started, answer, req.method === 'HEAD' ? 0 : answer.body.byteLength);
          })
          .catch(fail(res)),
      // The client went away before its body was complete: there is no one to answer.
      () => res.destroy(),
    );
  };
}

/** Characters the WHATWG URL parser leaves unchanged in a path (RFC 3986 pchar and '/'). */
const PLAIN_PATH = /^\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$/;
/** What the parser rewrites: a dot segment ('.', '..', also written with %2e) or a leading '//'. */
const REWRITTEN = /\/(?:\.|%2e){1,2}(?:\/|$)|^\/\//i;

/**
 * The pathname `new URL(target, origin)` would give, when the origin-form target provably is it
 * already (no query, no character or segment the parser would rewrite); undefined: parse it.
 * Saves a URL parse on every OCSP request.
 */
export function plainPathname(target: string): string | undefined {
  return PLAIN_PATH.test(target) && !REWRITTEN.test(target) ? target : undefined;
}

/**
 * What the WHATWG URL parser leaves unchanged in a query of an http(s) URL: everything but its
 * special-query percent-encode set (C0 controls, space, `"`, `#`, `<`, `>`, `'`) and non-ASCII.
 */
const PLAIN_QUERY = /^[A-Za-z0-9._~!$&()*+,;=:@%/?-]*$/;

/**
 * {@link plainPathname} for a target that may carry a query: the pathname when the path is
 * plain and the query, if any, is one the parser keeps as it came — so `origin + target` is
 * the parsed URL's href and the part before `?` its pathname. Every SCEP request has a query
 * (`?operation=…`); without this the direct connections handed each one to node:http.
 */
export function plainTargetPathname(target: string): string | undefined {
  const mark = target.indexOf('?');
  if (mark < 0) return plainPathname(target);
  return PLAIN_QUERY.test(target.slice(mark + 1)) ? plainPathname(target.slice(0, mark)) : undefined;
}

/**
 * The connection as the direct entry sees it: the peer address at once, the TLS details
 * (protocol, client chain: native calls) only if something reads them. OCSP never does.
 */
export function lazyTransport(socket: Socket): TransportContext {
  let full: TransportContext | undefined;
  return {
    remoteAddress: socket.remoteAddress ?? '',
    get tls() {
      full ??= transportFromSocket(socket);
      return full.tls;
    },
  };
}
