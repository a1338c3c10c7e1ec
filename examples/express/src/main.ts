// certwright's whole REST API in an Express app, inventory on embedded PGlite, on TLS 1.3.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { createHandler } from '@certwright/api';
import { createServices, SecretBox, silentLogger, systemClock } from '@certwright/core';
import { certwright } from '@certwright/host-express';
import { createPgliteStorage } from '@certwright/storage-pg';
import express from 'express';

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
const pki = certwright(createHandler({ auth: { type: 'api-key', secret: env('API_KEY') }, services }));

const app = express();
// 1. certwright first, before any body parser, at the paths it serves (it sees the full URL).
app.use(['/health', '/ready', '/api/v1', '/.well-known'], pki);
// 2. Your own parsers and routes.
app.use(express.json());
app.get('/hello', (_req, res) => res.json({ hello: 'world' }));

// 3. Express terminates TLS itself, so certwright sees client certificates.
const server = createServer(
  {
    minVersion: 'TLSv1.3',
    requestCert: true, // asked for, not required: mTLS routes check them per profile
    rejectUnauthorized: false,
    cert: readFileSync(env('TLS_CERT_PATH')),
    key: readFileSync(env('TLS_KEY_PATH')),
  },
  app,
);
server.listen(Number(process.env.PORT ?? 8443), process.env.HOST ?? '127.0.0.1', () => {
  console.log('listening on', server.address());
});
