/** Starts the example on TLS 1.3 with client certificates requested, not required. */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { serve } from '@hono/node-server';
import { createApp } from './app.js';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

serve(
  {
    fetch: createApp({ apiKey: env('API_KEY') }).fetch,
    createServer,
    serverOptions: {
      minVersion: 'TLSv1.3',
      requestCert: true,
      rejectUnauthorized: false,
      cert: readFileSync(env('TLS_CERT_PATH')),
      key: readFileSync(env('TLS_KEY_PATH')),
    },
    port: Number(process.env.PORT ?? 8443),
    hostname: process.env.HOST ?? '127.0.0.1',
  },
  (info) => console.log('listening on', info),
);
