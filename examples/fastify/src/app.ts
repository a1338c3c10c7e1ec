/**
 * A Fastify app with routes of its own and certwright's REST API beside them.
 */
import type { SecureContextOptions, TlsOptions } from 'node:tls';
import { createHandler } from '@certwright/api';
import { certwrightPlugin } from '@certwright/host-fastify';
import Fastify from 'fastify';

export interface AppOptions {
  /** Bearer key for /api/v1; certwright compares it in constant time. */
  apiKey: string;
  /** Fastify terminates TLS itself, so certwright sees client certificates (mTLS). */
  https: TlsOptions & SecureContextOptions;
}

export async function buildApp(options: AppOptions) {
  const app = Fastify({ https: options.https });
  const handler = createHandler({ auth: { type: 'api-key', secret: options.apiKey } });

  // The app's own routes keep Fastify's parsers: the plugin removes them only in its scope.
  app.get('/hello', async () => ({ hello: 'from fastify' }));
  app.post('/notes', async (request, reply) => reply.code(201).send({ received: request.body }));

  // The handler sees the full URL, prefix included, so it is registered at the paths it serves.
  for (const prefix of ['/health', '/ready', '/api/v1']) {
    await app.register(certwrightPlugin, { handler, prefix });
  }
  return app;
}
