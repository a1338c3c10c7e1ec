import { execFileSync } from 'node:child_process';
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RoundRobinBalancer } from './balancer.js';
import { HaproxyBalancer } from './haproxy-balancer.js';
import { bearer, type HttpsReply, httpsCall } from './https.js';
import { makeTestPki } from './openssl-pki.js';
import { type PrivateRedis, startPrivateRedis } from './private-services.js';
import { type ServerProcess, startServerProcess } from './server-process.js';

/** What the cluster needs of a TCP balancer in front of its instances. */
export interface TcpBalancer {
  readonly name: string;
  /** Its loopback port, known after start() and before route(). */
  readonly port: number;
  start(): Promise<void>;
  route(targets: readonly number[]): Promise<void>;
  stop(): Promise<void>;
}

export interface Cluster<B extends TcpBalancer = RoundRobinBalancer> {
  readonly ca: Buffer;
  readonly secret: string;
  readonly balancer: B;
  readonly redis: PrivateRedis;
  readonly servers: ServerProcess[];
  /** The balancer's public URL, which every instance announces (SVC_BASE_URL). */
  readonly baseUrl: string;
  /** An authenticated REST call through the balancer (or to one instance with `port`). */
  call(method: string, path: string, body?: unknown, port?: number): Promise<HttpsReply>;
  stop(): Promise<void>;
}

/**
 * Several certwright-server processes on one database and one Redis behind a round-robin
 * balancer (a Node one, or Debian's HAProxy with `balancer: 'haproxy'`), as docs/operations/scaling.md describes. Used by the scale-out test and the soak bench.
 */
export async function startCluster(options: ClusterOptions & { balancer?: 'node' }): Promise<Cluster>;
export async function startCluster(
  options: ClusterOptions & { balancer: 'haproxy' },
): Promise<Cluster<HaproxyBalancer>>;
export async function startCluster(
  options: ClusterOptions & { balancer?: 'node' | 'haproxy' },
): Promise<Cluster<TcpBalancer>>;
export async function startCluster(
  options: ClusterOptions & { balancer?: 'node' | 'haproxy' },
): Promise<Cluster<TcpBalancer>> {
  const pki = makeTestPki(['server']);
  const ca = readFileSync(pki.ca);
  const secret = `scale-${randomBytes(12).toString('hex')}`;
  const balancer: TcpBalancer =
    options.balancer === 'haproxy' ? new HaproxyBalancer() : new RoundRobinBalancer();
  await balancer.start();
  const redis = await startPrivateRedis();
  const baseUrl = `https://localhost:${balancer.port}`;
  const env = {
    SVC_TLS_CERT_PATH: pki.issued.server!.cert,
    SVC_TLS_KEY_PATH: pki.issued.server!.key,
    SVC_AUTH_SECRET: secret,
    // Instances sharing a database share its encryption key.
    SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    SVC_DATABASE_URL: options.databaseUrl,
    SVC_REDIS_URL: redis.url,
    SVC_BASE_URL: baseUrl,
    ...options.env,
  };
  const started = await Promise.allSettled(
    Array.from({ length: options.instances }, () => startServerProcess(env, options.entry)),
  );
  const servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const stop = async () => {
    for (const server of servers) server.child.kill('SIGTERM');
    await Promise.all(servers.map((s) => s.exited));
    await balancer.stop();
    await redis.stop();
  };
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await stop();
    throw (failed as PromiseRejectedResult).reason;
  }
  await balancer.route(servers.map((s) => s.port));
  return {
    ca,
    secret,
    balancer,
    redis,
    servers,
    baseUrl,
    call: (method, path, body, port) =>
      httpsCall(port ?? balancer.port, ca, path, { method, body, headers: bearer(secret) }),
    stop,
  };
}

export interface ClusterOptions {
  instances: number;
  databaseUrl: string;
  env?: Record<string, string>;
  /** The script each instance runs; default certwright-server's own entry. */
  entry?: string;
}

/** A GET whose body is binary (OCSP responses). */
export function getBinary(
  port: number,
  ca: Buffer,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', servername: 'localhost', port, path, ca, agent: false, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The status OpenSSL reads from a DER OCSP response ("good", "revoked", "unknown"). */
export function ocspCertStatus(der: Buffer): string {
  const dir = mkdtempSync(join(tmpdir(), 'cw-ocsp-'));
  const file = join(dir, 'resp.der');
  writeFileSync(file, der);
  const text = execFileSync('openssl', ['ocsp', '-respin', file, '-resp_text', '-noverify'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const match = /Cert Status: (\w+)/.exec(text);
  if (!match) throw new Error(`no certificate status in the OCSP response:\n${text}`);
  return match[1]!;
}

/** The signed OCSP answer of `serial` from the instance on `port`, through its cache. */
export async function ocspStatusAt(
  port: number,
  ca: Buffer,
  issuerId: string,
  serial: string,
): Promise<string> {
  const reply = await getBinary(port, ca, `/.well-known/pki/ocsp/${issuerId}/serial/${serial}`, {
    accept: 'application/ocsp-response',
  });
  if (reply.status !== 200) throw new Error(`OCSP at ${port}: HTTP ${reply.status}`);
  return ocspCertStatus(reply.body);
}

/** An ES256 ACME account key, signing flattened JWS (RFC 7515) by hand with node:crypto. */
export class AcmeKey {
  readonly privateKey: KeyObject;
  readonly jwk: Record<string, string>;
  constructor() {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = pair.privateKey;
    const jwk = pair.publicKey.export({ format: 'jwk' }) as Record<string, string>;
    this.jwk = { crv: jwk.crv!, kty: jwk.kty!, x: jwk.x!, y: jwk.y! };
  }

  /** RFC 7638 thumbprint. */
  thumbprint(): string {
    return createHash('sha256').update(JSON.stringify(this.jwk)).digest('base64url');
  }

  jws(payload: unknown, header: { url: string; nonce: string; kid?: string }): Record<string, string> {
    const protectedHeader = {
      alg: 'ES256',
      url: header.url,
      nonce: header.nonce,
      ...(header.kid ? { kid: header.kid } : { jwk: this.jwk }),
    };
    const p = Buffer.from(JSON.stringify(protectedHeader)).toString('base64url');
    const body = payload === '' ? '' : Buffer.from(JSON.stringify(payload)).toString('base64url');
    const signature = sign('sha256', Buffer.from(`${p}.${body}`), {
      key: this.privateKey,
      dsaEncoding: 'ieee-p1363',
    }).toString('base64url');
    return { protected: p, payload: body, signature };
  }
}

/** A fresh Replay-Nonce from the instance on `port`. */
export async function acmeNonce(port: number, ca: Buffer): Promise<string> {
  const reply = await httpsCall(port, ca, '/acme/new-nonce', { method: 'HEAD' });
  const nonce = reply.headers['replay-nonce'];
  if (typeof nonce !== 'string') throw new Error(`no Replay-Nonce from ${port} (HTTP ${reply.status})`);
  return nonce;
}

/** POSTs a JWS to `path` on the instance on `port`. */
export function acmePost(port: number, ca: Buffer, path: string, jws: Record<string, string>) {
  return httpsCall(port, ca, path, {
    method: 'POST',
    body: jws,
    headers: { 'content-type': 'application/jose+json' },
  });
}
