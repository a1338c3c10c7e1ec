/**
 * A real certwright server process for ACME client interop: TLS 1.3 on 127.0.0.1, a fresh data
 * directory, and the challenge validator pointed at a pebble-challtestsrv DNS server (every A
 * query answers 127.0.0.1, TXT records set through its management API) and at loopback ports
 * the clients answer on. Loopback validation is allowed here only because the test owns both
 * ends; production refuses it unless configured.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ServerProcess,
  startServerProcess,
} from '../../../packages/server/test/support/server-process.js';
import { send } from './https-client.js';
import { createTestTls } from './tls.js';

/** A TCP port that was free on 127.0.0.1 a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

async function untilAccepting(port: number, what: string, alive: () => boolean): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (!alive()) throw new Error(`${what} exited before listening`);
    const open = await new Promise<boolean>((resolve) => {
      const req = request({ host: '127.0.0.1', port, path: '/', method: 'GET' }, (res) => {
        res.resume();
        resolve(true);
      });
      req.on('error', () => resolve(false));
      req.end();
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not listen on 127.0.0.1:${port}`);
}

export interface ChallTestSrv {
  dns: string;
  /** Serves TXT `value` at `host` (a fully qualified name with the trailing dot). */
  setTxt(host: string, value: string): Promise<void>;
  stop(): void;
}

async function manage(port: number, path: string, body: unknown): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST' }, (res) => {
      res.resume();
      res.statusCode === 200 ? resolve() : reject(new Error(`challtestsrv ${path}: ${res.statusCode}`));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

export async function startChallTestSrv(): Promise<ChallTestSrv & { managementPort: number }> {
  const dnsPort = await freePort();
  const managementPort = await freePort();
  const child = spawn(
    'pebble-challtestsrv',
    [
      ...['-dns01', `127.0.0.1:${dnsPort}`, '-management', `127.0.0.1:${managementPort}`],
      ...['-http01', '', '-https01', '', '-tlsalpn01', ''],
      ...['-defaultIPv4', '127.0.0.1', '-defaultIPv6', ''],
    ],
    { stdio: 'ignore' },
  );
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const stop = () => {
    if (!exited) child.kill('SIGKILL');
  };
  try {
    await untilAccepting(managementPort, 'pebble-challtestsrv', () => !exited);
  } catch (error) {
    stop();
    throw error;
  }
  return {
    dns: `127.0.0.1:${dnsPort}`,
    managementPort,
    setTxt: (host, value) => manage(managementPort, '/set-txt', { host, value }),
    stop,
  };
}

export interface AcmeServer {
  origin: string;
  directory: string;
  /** The CA that signed the server's TLS certificate: what clients must trust. */
  caPath: string;
  adminKey: string;
  http01Port: number;
  tlsAlpn01Port: number;
  process: ServerProcess;
  /** An admin REST call; JSON bodies in and out. */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; json: any; text: string }>;
  stop(): Promise<void>;
}

export async function startAcmeServer(dns: string): Promise<AcmeServer> {
  const dir = mkdtempSync(join(tmpdir(), 'cw-acme-interop-'));
  const tls = createTestTls();
  const caPath = join(dir, 'ca.pem');
  const certPath = join(dir, 'server.pem');
  const keyPath = join(dir, 'server-key.pem');
  writeFileSync(caPath, tls.caPem);
  writeFileSync(certPath, tls.serverCertPem);
  writeFileSync(keyPath, tls.serverKeyPem);
  const port = await freePort();
  const http01Port = await freePort();
  const tlsAlpn01Port = await freePort();
  const adminKey = `acme-interop-${randomBytes(12).toString('hex')}`;
  // The TLS certificate names IP:127.0.0.1, so no client depends on how it resolves localhost.
  const origin = `https://127.0.0.1:${port}`;
  let proc: ServerProcess;
  try {
    proc = await startServerProcess({
      SVC_PORT: String(port),
      SVC_DATA_DIR: join(dir, 'data'),
      SVC_TLS_CERT_PATH: certPath,
      SVC_TLS_KEY_PATH: keyPath,
      SVC_AUTH_SECRET: adminKey,
      SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      SVC_BASE_URL: origin,
      SVC_ACME_SERVER_HTTP01_PORT: String(http01Port),
      SVC_ACME_SERVER_TLSALPN01_PORT: String(tlsAlpn01Port),
      SVC_ACME_SERVER_DNS01_RESOLVER: dns,
      SVC_ACME_SERVER_VALIDATION_RESOLVER: dns,
      SVC_ACME_SERVER_VALIDATION_ALLOWED_RANGES: '127.0.0.0/8',
      // Every client run makes a few dozen requests from 127.0.0.1.
      SVC_RATE_LIMIT_ENROLLMENT: '100000',
      SVC_RATE_LIMIT_PUBLIC: '100000',
      SVC_RATE_LIMIT_PKI: '100000',
    });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const stop = async () => {
    if (proc.child.exitCode === null && proc.child.signalCode === null) {
      proc.child.kill('SIGKILL');
      await proc.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const api: AcmeServer['api'] = async (method, path, body) => {
    const res = await send({
      url: new URL(path, origin),
      method,
      ca: tls.caPem,
      headers: {
        authorization: `Bearer ${adminKey}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: Buffer.from(JSON.stringify(body)) } : {}),
    });
    const text = res.body.toString();
    const type = res.headers.get('content-type')?.[0] ?? '';
    return { status: res.status, json: /json/.test(type) ? JSON.parse(text) : undefined, text };
  };
  return {
    origin,
    directory: `${origin}/acme/directory`,
    caPath,
    adminKey,
    http01Port,
    tlsAlpn01Port,
    process: proc,
    api,
    stop,
  };
}

/** Kills a client process that outlived its test (a hung client must not keep vitest alive). */
export function killIfRunning(child: ChildProcess | undefined): void {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}
