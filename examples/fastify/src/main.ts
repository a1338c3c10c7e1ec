/** Starts the example on TLS 1.3 with client certificates requested, not required. */
import { readFileSync } from 'node:fs';
import { buildApp } from './app.js';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const app = await buildApp({
  apiKey: env('API_KEY'),
  https: {
    minVersion: 'TLSv1.3',
    requestCert: true,
    rejectUnauthorized: false,
    cert: readFileSync(env('TLS_CERT_PATH')),
    key: readFileSync(env('TLS_KEY_PATH')),
  },
});
console.log(
  'listening on',
  await app.listen({ port: Number(process.env.PORT ?? 8443), host: process.env.HOST ?? '127.0.0.1' }),
);
