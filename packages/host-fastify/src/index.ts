/**
 * Mount a certwright handler in Fastify 5.
 *
 * The handler sees the request's full URL (`request.url`), with the register `prefix`
 * still in it: the prefix only chooses which requests reach the handler, so register the
 * plugin at the paths the handler itself serves (for `createHandler`: `/health`, `/api/v1`,
 * `/.well-known`, …), or once without a prefix as a catch-all behind your own routes.
 * Absolute URLs the handler builds (ACME directory, `Location` headers) are then right.
 *
 * @packageDocumentation
 */
import type { Handler } from '@certwright/core';
import { requestOrigin, sendWebResponse, toWebRequest, transportFromSocket } from '@certwright/core/node';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';

export interface CertwrightPluginOptions {
  /** Any certwright handler, e.g. the one `createHandler()` from `@certwright/api` returns. */
  handler: Handler;
}

/**
 * Fastify plugin: every method on `<prefix>` and `<prefix>/*` goes to `options.handler`.
 *
 * - Register it without `fastify-plugin` (as exported): its content-type parsers are
 *   removed in its own encapsulated scope only, so Fastify never reads the body and the
 *   handler gets the exact bytes sent, whatever the content type. Your other routes keep
 *   their parsers.
 * - The handler's response is final (404s included) and is streamed to the socket with
 *   the reply hijacked; headers set by earlier hooks (`reply.header()`) are kept unless the
 *   handler sets the same header.
 * - The TransportContext (peer address, TLS client certificate chain, exporter) is read
 *   from the socket, so Fastify must terminate TLS itself (`https` option) for mTLS routes.
 *
 * @example
 * ```ts
 * app.get('/hello', async () => 'hi');
 * await app.register(certwrightPlugin, { handler, prefix: '/api/v1' });
 * ```
 */
export const certwrightPlugin: FastifyPluginAsync<CertwrightPluginOptions> = async (fastify, options) => {
  const { handler } = options;
  fastify.removeAllContentTypeParsers();
  // A catch-all parser that reads nothing: the body stays on the socket for the handler.
  fastify.addContentTypeParser('*', (_request, _payload, done) => done(null));

  const route = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const raw = request.raw;
    const webRequest = toWebRequest(raw, {
      origin: requestOrigin(request.protocol, raw.headers.host, raw.socket.localPort),
      url: request.url,
    });
    const response = await handler(webRequest, transportFromSocket(raw.socket));
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) reply.raw.setHeader(name, value);
    }
    reply.hijack();
    // After hijack Fastify no longer answers for us. sendWebResponse has already destroyed
    // the socket when the body failed half-way, so all that is left is to log it.
    await sendWebResponse(reply.raw, response, request.method).catch((error: unknown) => {
      request.log.error({ err: error }, 'certwright response body failed after the status line');
    });
  };
  fastify.all('/', route);
  fastify.all('/*', route);
};
