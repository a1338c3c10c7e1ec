// certwright's whole REST API on a plain Node.js HTTPS listener, inventory on embedded PGlite.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { createHandler } from '@certwright/api';
import { createServices, SecretBox, silentLogger, systemClock } from '@certwright/core';
import { requestOrigin, sendWebResponse, toWebRequest, transportFromSocket } from '@certwright/core/node';
import { createPgliteStorage } from '@certwright/storage-pg';

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

const server = createServer(
  {
    minVersion: 'TLSv1.3',
    requestCert: true, // asked for, not required: mTLS routes check them per profile
    rejectUnauthorized: false,
    cert: readFileSync(env('TLS_CERT_PATH')),
    key: readFileSync(env('TLS_KEY_PATH')),
  },
  async (req, res) => {
    const origin = requestOrigin('https', req.headers.host, req.socket.localPort);
    const response = await handler(toWebRequest(req, { origin }), transportFromSocket(req.socket));
    await sendWebResponse(res, response, req.method).catch(() => res.destroy());
  },
);
server.listen(Number(process.env.PORT ?? 8443), process.env.HOST ?? '127.0.0.1', () => {
  console.log('listening on', server.address());
});
