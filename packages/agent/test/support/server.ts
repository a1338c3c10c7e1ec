/**
 * A certwright server for agent tests: every service on in-memory PGlite behind the REST
 * handler, served over real TLS on a loopback port, so the agent talks HTTPS exactly as in
 * production. The issuance pipeline is driven by the test (`processDueJobs`), not a timer.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHandler } from '@certwright/api';
import { createServices, SecretBox, type Services, silentLogger, systemClock } from '@certwright/core';
import { createRequestListener } from '@certwright/server';
import type { createPgliteStorage } from '@certwright/storage-pg';
import { createMigratedPgliteStorage } from '@certwright/storage-pg/testing';

export const ADMIN_KEY = 'agent-test-admin-key-0123456789';

export interface TestServer {
  url: string;
  caPath: string;
  caPem: string;
  services: Services;
  storage: Awaited<ReturnType<typeof createPgliteStorage>>;
  // biome-ignore lint/suspicious/noExplicitAny: tests read answers loosely, as a client would.
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/** A CA and a server certificate for 127.0.0.1/localhost made by the openssl CLI. */
export function makeServerTls(): { dir: string; ca: string; cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cw-agent-tls-'));
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  ssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca-key.pem',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=agent test CA',
  );
  writeFileSync(
    join(dir, 'ext.cnf'),
    'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n',
  );
  ssl('req', ...ec, '-keyout', 'key.pem', '-out', 'srv.csr', '-subj', '/CN=localhost');
  ssl(
    'x509',
    '-req',
    '-in',
    'srv.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca-key.pem',
    '-CAcreateserial',
    '-out',
    'cert.pem',
    '-days',
    '2',
    '-extfile',
    'ext.cnf',
  );
  return { dir, ca: join(dir, 'ca.pem'), cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') };
}

export async function startTestServer(): Promise<TestServer> {
  const storage = await createMigratedPgliteStorage({
    secretBox: new SecretBox(SecretBox.generateKey()),
    clock: systemClock,
    logger: silentLogger,
  });
  const services = createServices({ storage, clock: systemClock, logger: silentLogger });
  const handler = createHandler({
    auth: { type: 'api-key', secret: ADMIN_KEY },
    services,
    logger: silentLogger,
  });
  const tls = makeServerTls();
  const server: Server = createServer(
    { cert: readFileSync(tls.cert), key: readFileSync(tls.key) },
    createRequestListener(handler),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const caPem = readFileSync(tls.ca, 'utf8');
  return {
    url,
    caPath: tls.ca,
    caPem,
    services,
    storage,
    async call(method, path, body) {
      const res = await handler(
        new Request(`${url}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${ADMIN_KEY}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }),
        { remoteAddress: '127.0.0.1' },
      );
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await storage.close();
    },
  };
}
