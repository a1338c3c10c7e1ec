/**
 * Mount a certwright handler in Express (4.21+ or 5).
 *
 * The handler sees the request's full original URL (`req.originalUrl`), never a path with
 * the mount prefix stripped: the prefix you mount at only chooses which requests reach the
 * handler, so mount it at the paths the handler itself serves (for `createHandler`:
 * `/health`, `/ready`, `/api/v1`, `/.well-known`, …, or at the root after your own routes).
 * That way absolute URLs the handler builds (ACME directory, `Location` headers) are right.
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Handler } from '@certwright/core';
import { requestOrigin, sendWebResponse, toWebRequest, transportFromSocket } from '@certwright/core/node';

/**
 * The parts of an Express request the adapter reads. Declared structurally so that neither
 * this package nor its users need `@types/express`; Express's own `Request` satisfies it.
 */
export interface ExpressLikeRequest extends IncomingMessage {
  /** Path and query as received, before any mount path was stripped. */
  originalUrl: string;
  /** `http` or `https`; follows Express's `trust proxy` setting for `X-Forwarded-Proto`. */
  protocol: string;
  /** Left by a body parser that ran first; only a raw `Buffer` can be used. */
  body?: unknown;
}

/** Express middleware signature, without a dependency on Express's types. */
export type CertwrightMiddleware = (
  req: ExpressLikeRequest,
  res: ServerResponse,
  next: (error?: unknown) => void,
) => void;

/** Raised (through `next`) when a body parser consumed the body before certwright saw it. */
export class BodyAlreadyConsumedError extends Error {
  override readonly name = 'BodyAlreadyConsumedError';
  readonly code = 'body_already_consumed';
  constructor() {
    super(
      'the request body was consumed by an earlier body parser; mount the certwright middleware ' +
        'before express.json()/urlencoded()/text(), or use express.raw() for its routes',
    );
  }
}

/**
 * Express middleware that hands every request it receives to `handler` and writes the
 * handler's response back, streaming.
 *
 * - The handler's response is final, 404s included; `next()` is only called with an error.
 * - Request bodies reach the handler as the exact bytes sent, whatever the content type.
 *   Mount before body parsers; if `express.raw()` ran first, its `Buffer` is used.
 * - The TransportContext (peer address, TLS client certificate chain, exporter) is read
 *   from the socket, so Express must terminate TLS itself for mTLS routes to work.
 *
 * @example
 * ```ts
 * app.get('/hello', (_req, res) => res.send('hi'));
 * app.use(['/health', '/api/v1'], certwright(createHandler({ auth: { type: 'none' } })));
 * ```
 */
export function certwright(handler: Handler): CertwrightMiddleware {
  return (req, res, next) => {
    let body: Uint8Array | undefined;
    if (req.body instanceof Uint8Array) {
      body = req.body;
    } else if (req.readableEnded) {
      // The stream was read to its end by someone else; the exact bytes are gone.
      next(new BodyAlreadyConsumedError());
      return;
    }
    let request: Request;
    try {
      request = toWebRequest(req, {
        origin: requestOrigin(req.protocol, req.headers.host, req.socket.localPort),
        url: req.originalUrl,
        body,
      });
    } catch (error) {
      next(error);
      return;
    }
    handler(request, transportFromSocket(req.socket))
      .then((response) => sendWebResponse(res, response, req.method))
      .catch((error: unknown) => {
        // Before the status line Express's error handling can still answer; after it, the
        // only honest signal left is to cut the connection.
        if (!res.headersSent) next(error);
        else res.destroy();
      });
  };
}
