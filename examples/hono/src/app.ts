/**
 * A Hono app with routes of its own and certwright's REST API beside them. Hono is
 * Web-standard, so no adapter package is needed: the handler takes `c.req.raw` as it is.
 */
import { createHandler } from '@certwright/api';
import type { TransportContext } from '@certwright/core';
import { transportFromSocket } from '@certwright/core/node';
import type { HttpBindings } from '@hono/node-server';
import { type Context, Hono } from 'hono';

export interface AppOptions {
  /** Bearer key for /api/v1; certwright compares it in constant time. */
  apiKey: string;
}

/** On @hono/node-server the Node socket is at `c.env.incoming.socket`: it knows the TLS state. */
export function transportOf(c: Context<{ Bindings: HttpBindings }>): TransportContext {
  return transportFromSocket(c.env.incoming.socket);
}

export function createApp(options: AppOptions) {
  const app = new Hono<{ Bindings: HttpBindings }>();
  const handler = createHandler({ auth: { type: 'api-key', secret: options.apiKey } });

  app.get('/hello', (c) => c.json({ hello: 'from hono' }));

  // c.req.raw is the untouched Request: its URL is the full URL and its body the exact bytes.
  const pki = (c: Context<{ Bindings: HttpBindings }>) => handler(c.req.raw, transportOf(c));
  app.all('/health', pki);
  app.all('/ready', pki);
  app.all('/api/v1/*', pki);
  return app;
}
