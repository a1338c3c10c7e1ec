import { spawn } from 'node:child_process';
import { copyFileSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { Agent } from 'node:https';
import { type AddressInfo, connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endOfLife } from '../src/runtime-support.js';
import { type HttpsOptions, type HttpsReply, httpsCall } from './support/https.js';
import { makeTestPki } from './support/openssl-pki.js';
import { runServer, type ServerProcess, startServerProcess } from './support/server-process.js';

const SECRET = 'server-test-secret-0123456789';

/** openssl s_client with stdin closed, so it exits right after the handshake. */
function sClient(args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn('openssl', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stdin.end();
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

function get(port: number, ca: string, path: string, options: HttpsOptions = {}): Promise<HttpsReply> {
  return httpsCall(port, readFileSync(ca), path, options);
}

describe('certwright-server over TLS 1.3', () => {
  const pki = makeTestPki(['first', 'second']);
  const certPath = `${pki.dir}/live.pem`;
  const keyPath = `${pki.dir}/live-key.pem`;
  let server: ServerProcess;

  beforeAll(async () => {
    copyFileSync(pki.issued.first!.cert, certPath);
    copyFileSync(pki.issued.first!.key, keyPath);
    server = await startServerProcess({
      SVC_TLS_CERT_PATH: certPath,
      SVC_TLS_KEY_PATH: keyPath,
      SVC_AUTH_SECRET: SECRET,
      // The broadest range setting there is: it admits every private address and still no loopback.
      SVC_SCEP_PROBE_ALLOWED_RANGES: '0.0.0.0/0, ::/0',
    });
  });
  afterAll(async () => {
    server?.child.kill('SIGKILL');
  });

  it('keeps the SCEP probe off loopback whatever its range setting: the server on 127.0.0.1 sees nothing', async () => {
    let requests = 0;
    const scep = createHttpServer((_req, res) => {
      requests++;
      res.end('SCEPStandard');
    });
    await new Promise<void>((resolve) => scep.listen(0, '127.0.0.1', resolve));
    try {
      const port = (scep.address() as AddressInfo).port;
      for (const url of [
        `http://127.0.0.1:${port}/scep`,
        `http://localhost:${port}/scep`,
        `http://[::ffff:7f00:1]:${port}/`,
      ]) {
        const res = await get(server.port, pki.ca, '/api/v1/network-scan/scep-probe', {
          method: 'POST',
          headers: { authorization: `Bearer ${SECRET}` },
          body: { url },
        });
        expect(res.status, url).toBe(200);
        expect(JSON.parse(res.body), url).toMatchObject({
          reachable: false,
          error: expect.stringMatching(/loopback/),
        });
      }
      expect(requests).toBe(0);
    } finally {
      await new Promise<void>((resolve) => scep.close(() => resolve()));
    }
  });

  it('warns at start-up exactly when it runs on an end-of-life Node.js', () => {
    const eol = endOfLife(process.version, new Date());
    expect(server.output().includes('reached end of life')).toBe(eol !== undefined);
    if (eol)
      expect(server.output()).toMatch(
        new RegExp(`Node\\.js ${eol.major} reached end of life on ${eol.date}`),
      );
  });

  it('serves /health and the public info routes without a key', async () => {
    expect(await get(server.port, pki.ca, '/health')).toMatchObject({ status: 200, body: '{"status":"ok"}' });
    const info = await get(server.port, pki.ca, '/api/v1/auth/info');
    expect(JSON.parse(info.body)).toEqual({ auth_type: 'api-key' });
    const version = await get(server.port, pki.ca, '/api/v1/version', { method: 'POST' });
    expect(version.status).toBe(405);
    expect(version.headers.allow).toBe('GET');
  });

  it('requires the key for /metrics and exposes Prometheus text with it', async () => {
    expect((await get(server.port, pki.ca, '/metrics')).status).toBe(401);
    const metrics = await get(server.port, pki.ca, '/metrics', {
      headers: { authorization: `Bearer ${SECRET}` },
    });
    expect(metrics.status).toBe(200);
    expect(metrics.body).toContain('svc_notification_dead_total 0');
    expect(metrics.body).toMatch(/svc_http_requests_total\{method="GET",route="\/health",status="200"\} \d+/);
  });

  it('accepts TLS 1.3 and refuses TLS 1.2', async () => {
    const args = [
      's_client',
      '-connect',
      `127.0.0.1:${server.port}`,
      '-servername',
      'localhost',
      '-CAfile',
      pki.ca,
    ];
    const ok = await sClient([...args, '-tls1_3']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('TLSv1.3');
    expect(ok.stdout).toContain('Verify return code: 0 (ok)');
    const refused = await sClient([...args, '-tls1_2']);
    expect(refused.code).not.toBe(0);
    expect(refused.stdout).not.toContain('TLSv1.2, Cipher');
  });

  it('gives a plaintext HTTP request no HTTP response', async () => {
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(server.port, '127.0.0.1', () =>
        socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n'),
      );
      let data = '';
      socket.on('data', (d) => {
        data += d.toString('latin1');
      });
      socket.on('close', () => resolve(data));
      socket.on('error', () => resolve(data));
      socket.setTimeout(10_000, () => socket.destroy());
    });
    expect(answer).not.toMatch(/HTTP\/1\.[01]/);
  });

  it('reloads the certificate on SIGHUP for new connections while a keep-alive connection keeps working', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const before = await get(server.port, pki.ca, '/health', { agent });
    expect(before.peerCn).toBe('first');

    copyFileSync(pki.issued.second!.cert, certPath);
    copyFileSync(pki.issued.second!.key, keyPath);
    server.child.kill('SIGHUP');
    await waitFor(() => server.output().includes('TLS certificate and key reloaded'));

    const kept = await get(server.port, pki.ca, '/health', { agent });
    expect(kept).toMatchObject({ status: 200, peerCn: 'first' });
    const fresh = await get(server.port, pki.ca, '/health');
    expect(fresh.peerCn).toBe('second');
    agent.destroy();

    // A certificate with the wrong key is refused and the current pair stays in use.
    copyFileSync(pki.issued.first!.cert, certPath);
    server.child.kill('SIGHUP');
    await waitFor(() => server.output().includes('TLS reload refused'));
    expect((await get(server.port, pki.ca, '/health')).peerCn).toBe('second');
  });

  it('requests a client certificate without requiring one', async () => {
    const socket = tlsConnect({
      host: '127.0.0.1',
      port: server.port,
      servername: 'localhost',
      ca: readFileSync(pki.ca),
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('secureConnect', () => resolve());
      socket.once('error', reject);
    });
    expect(socket.getProtocol()).toBe('TLSv1.3');
    socket.destroy();
  });
});

describe('certwright-server start-up refusals', () => {
  const pki = makeTestPki(['server']);
  const tlsEnv = { SVC_TLS_CERT_PATH: pki.issued.server!.cert, SVC_TLS_KEY_PATH: pki.issued.server!.key };

  it.each([
    [{ ...tlsEnv, SVC_AUTH_TYPE: 'jwt' }, /authenticating gateway.*SVC_AUTH_TYPE=none/],
    [{ ...tlsEnv, SVC_AUTH_TYPE: 'foo' }, /SVC_AUTH_TYPE='foo' is not supported/],
    [{ SVC_TLS_KEY_PATH: tlsEnv.SVC_TLS_KEY_PATH, SVC_AUTH_SECRET: SECRET }, /SVC_TLS_CERT_PATH is required/],
    [
      { SVC_TLS_CERT_PATH: tlsEnv.SVC_TLS_CERT_PATH, SVC_AUTH_SECRET: SECRET },
      /SVC_TLS_KEY_PATH is required/,
    ],
    [{ ...tlsEnv }, /SVC_AUTH_SECRET is required/],
    [
      { ...tlsEnv, SVC_AUTH_SECRET: SECRET, SVC_SCEP_PROBE_ALLOWED_RANGES: '10.0.0.0/8, 127.0.0.1' },
      /SVC_SCEP_PROBE_ALLOWED_RANGES: loopback entries \(127\.0\.0\.1\/32\) are not allowed/,
    ],
    [
      { ...tlsEnv, SVC_AUTH_SECRET: SECRET, SVC_TLS_CERT_PATH: '/nonexistent/cert.pem' },
      /SVC_TLS_CERT_PATH: cannot read/,
    ],
  ])('exits non-zero naming the problem (%#)', async (env, message) => {
    const proc = runServer({ SVC_LISTEN_ADDR: '127.0.0.1', SVC_PORT: '0', ...env });
    const code = await proc.exited;
    expect(code).not.toBe(0);
    expect(proc.output()).toMatch(message);
  });

  it('drains and exits 0 on SIGTERM', async () => {
    const server = await startServerProcess({ ...tlsEnv, SVC_AUTH_TYPE: 'none' });
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 50));
  if (!condition()) throw new Error('condition not reached');
}
