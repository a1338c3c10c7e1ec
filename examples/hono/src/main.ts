// certwright's whole REST API in a Hono app, inventory on embedded PGlite, on TLS 1.3.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { createHandler } from '@certwright/api';
import { createServices, SecretBox, silentLogger, systemClock } from '@certwright/core';
import { transportFromSocket } from '@certwright/core/node';
import { createPgliteStorage } from '@certwright/storage-pg';
import { type HttpBindings, serve } from '@hono/node-server';
import { type Context, Hono } from 'hono';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

// ENCRYPTION_KEY (32 bytes, base64) seals CA keys and secrets in the database: keep it safe and
// the same at every start, or they cannot be opened again. The folder is created if missing.
const secretBox = new SecretBox(Buffer.from(env('ENCRYPTION_KEY'), 'base64'));
const storage = await createPgliteStorage(
  { dataDir: process.env.DATA_DIR ?? './data/pglite' },
  { secretBox },
);
await storage.migrate();
const services = createServices({ storage, clock: systemClock, logger: silentLogger });
const handler = createHandler({ auth: { type: 'api-key', secret: env('API_KEY') }, services });

const app = new Hono<{ Bindings: HttpBindings }>();
app.get('/hello', (c) => c.json({ hello: 'world' }));
// c.req.raw is the untouched Request (full URL, exact body); the Node socket knows the TLS state.
const pki = (c: Context<{ Bindings: HttpBindings }>) =>
  handler(c.req.raw, transportFromSocket(c.env.incoming.socket));
for (const path of ['/health', '/ready', '/api/v1/*', '/.well-known/*']) app.all(path, pki);

serve(
  {
    fetch: app.fetch,
    createServer, // node:https: Hono's Node server terminates TLS itself
    serverOptions: {
      minVersion: 'TLSv1.3',
      requestCert: true, // asked for, not required: mTLS routes check them per profile
      rejectUnauthorized: false,
      cert: readFileSync(env('TLS_CERT_PATH')),
      key: readFileSync(env('TLS_KEY_PATH')),
    },
    port: Number(process.env.PORT ?? 8443),
    hostname: process.env.HOST ?? '127.0.0.1',
  },
  (info) => console.log('listening on', info),
);
