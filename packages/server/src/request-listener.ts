import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Handler, Logger } from '@certwright/core';
import { requestOrigin, sendWebResponse, toWebRequest, transportFromSocket } from '@certwright/core/node';

/**
 * The server's own Node listener: hands each request to a certwright handler unchanged.
 * The handler produces every response, errors included; this only guards against a
 * handler that throws anyway, answering 500 without detail.
 */
export function createRequestListener(
  handler: Handler,
  logger?: Logger,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    Promise.resolve()
      .then(() =>
        handler(
          toWebRequest(req, { origin: requestOrigin('https', req.headers.host, req.socket.localPort) }),
          transportFromSocket(req.socket),
        ),
      )
      .then((response) => sendWebResponse(res, response, req.method))
      .catch((error: unknown) => {
        logger?.error({ err: error }, 'request failed outside the handler error mapping');
        if (!res.headersSent) {
          res.writeHead(500, { 'content-type': 'application/problem+json' });
          res.end(JSON.stringify({ type: 'about:blank', title: 'Internal Server Error', status: 500 }));
        } else {
          res.destroy();
        }
      });
  };
}
