// certwright's whole REST API in a Fastify app, inventory on embedded PGlite, on TLS 1.3.
import { readFileSync } from 'node:fs';
import { createHandler } from '@certwright/api';
import { createServices, SecretBox, silentLogger, systemClock } from '@certwright/core';
import { certwrightPlugin } from '@certwright/host-fastify';
import { createPgliteStorage } from '@certwright/storage-pg';
import Fastify from 'fastify';

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

const app = Fastify({
  // Fastify terminates TLS itself, so certwright sees client certificates.
  https: {
    minVersion: 'TLSv1.3',
    requestCert: true, // asked for, not required: mTLS routes check them per profile
    rejectUnauthorized: false,
    cert: readFileSync(env('TLS_CERT_PATH')),
    key: readFileSync(env('TLS_KEY_PATH')),
  },
});
app.get('/hello', async () => ({ hello: 'world' })); // your routes keep their parsers
// The handler sees the full URL, prefix included, so it is registered at the paths it serves.
for (const prefix of ['/health', '/ready', '/api/v1', '/.well-known']) {
  await app.register(certwrightPlugin, { handler, prefix });
}
const address = await app.listen({
  port: Number(process.env.PORT ?? 8443),
  host: process.env.HOST ?? '127.0.0.1',
});
console.log('listening on', address);
