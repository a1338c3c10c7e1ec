/**
 * An Express app with routes of its own and certwright's REST API beside them.
 */
import { createHandler } from '@certwright/api';
import type { Services } from '@certwright/core';
import { certwright } from '@certwright/host-express';
import express, { type Express } from 'express';

export interface AppOptions {
  /** Bearer key for /api/v1; certwright compares it in constant time. */
  apiKey: string;
  /** certwright's services (see certwright.ts); the same objects are callable in-process. */
  services: Services;
}

export function createApp(options: AppOptions): Express {
  const app = express();
  const pki = certwright(
    createHandler({ auth: { type: 'api-key', secret: options.apiKey }, services: options.services }),
  );

  // certwright first: it needs the request body exactly as sent, so no parser may run before it.
  // The handler sees the full URL, so it is mounted at the paths it serves.
  app.use(['/health', '/ready', '/api/v1', '/.well-known/pki'], pki);

  // The app's own routes, with the parsers they want.
  app.use(express.json());
  app.get('/hello', (_req, res) => {
    res.json({ hello: 'from express' });
  });
  app.post('/notes', (req, res) => {
    res.status(201).json({ received: req.body });
  });
  return app;
}
