/**
 * Starts the example on TLS 1.3. Express must terminate TLS itself for certwright to see
 * client certificates (mTLS enrollment); behind a TLS-terminating proxy there are none.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { createApp } from './app.js';
import { openCertwright } from './certwright.js';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const { services } = await openCertwright(
  { dataDir: process.env.DATA_DIR ?? './data/pglite' },
  Buffer.from(env('ENCRYPTION_KEY'), 'base64'),
);
const server = createServer(
  {
    minVersion: 'TLSv1.3',
    requestCert: true,
    rejectUnauthorized: false,
    cert: readFileSync(env('TLS_CERT_PATH')),
    key: readFileSync(env('TLS_KEY_PATH')),
  },
  createApp({ apiKey: env('API_KEY'), services }),
);
server.listen(Number(process.env.PORT ?? 8443), process.env.HOST ?? '127.0.0.1', () => {
  console.log('listening on', server.address());
});
