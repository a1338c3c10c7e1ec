import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DirectPath, Handler, Logger } from '@certwright/core';
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

/**
 * The server's own Node listener: hands each request to a certwright handler unchanged.
 * The handler produces every response, errors included; this only guards against a
 * handler that throws anyway, answering 500 without detail.
 *
 * A handler with a direct entry (createHandler's, for OCSP) is asked first for the requests
 * it names: their small body is read whole and the answer written as bytes, without a Web
 * Request or Response (docs/architecture.md, "Direct path"). What the direct entry declines
 * goes to the handler with the body already read.
 */
export function createRequestListener(
  handler: Handler & { direct?: DirectPath },
  logger?: Logger,
): (req: IncomingMessage, res: ServerResponse) => void {
  const { direct } = handler;

  const fail = (res: ServerResponse) => (error: unknown) => {
    logger?.error({ err: error }, 'request failed outside the handler error mapping');
    if (!res.headersSent) {
      res.writeHead(500, { 'content-type': 'application/problem+json' });
      res.end(JSON.stringify({ type: 'about:blank', title: 'Internal Server Error', status: 500 }));
    } else {
      res.destroy();
    }
  };

  const viaWeb = (req: IncomingMessage, res: ServerResponse, origin: string, body?: Uint8Array) =>
    handler(
      toWebRequest(req, { origin, ...(body !== undefined ? { body } : {}) }),
      transportFromSocket(req.socket),
    ).then((response) => sendWebResponse(res, response, req.method));

  /** The request's URL when the direct entry takes its kind, with the body length to read. */
  const directTarget = (req: IncomingMessage, origin: string): { url: URL; length: number } | undefined => {
    if (!direct) return undefined;
    let url: URL;
    try {
      url = new URL(req.url ?? '/', origin);
    } catch {
      return undefined;
    }
    const limit = direct.bodyLimit(req.method ?? 'GET', url.pathname);
    const length = limit === undefined ? undefined : declaredBodyLength(req, limit);
    return length === undefined ? undefined : { url, length };
  };

  return (req, res) => {
    const origin = requestOrigin('https', req.headers.host, req.socket.localPort);
    const target = directTarget(req, origin);
    if (!target || !direct) {
      Promise.resolve()
        .then(() => viaWeb(req, res, origin))
        .catch(fail(res));
      return;
    }
    readDeclaredBody(req, target.length).then(
      (body) =>
        direct
          .answer(requestHead(req, target.url.href), body, transportFromSocket(req.socket))
          .then((answer) => {
            if (answer === undefined) return viaWeb(req, res, origin, body);
            if (answer instanceof Response) return sendWebResponse(res, answer, req.method);
            sendPlainResponse(res, answer, req.method);
          })
          .catch(fail(res)),
      // The client went away before its body was complete: there is no one to answer.
      () => res.destroy(),
    );
  };
}
