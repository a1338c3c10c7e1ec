/**
 * A Debian nginx started by the test on a free loopback port with its own prefix and
 * configuration, so it needs no system paths and runs next to other tests.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestNginx {
  dir: string;
  port: number;
  tlsDir: string;
  certPath: string;
  keyPath: string;
  /** argv prefix that addresses this instance: `nginx -p … -c … -e …`. */
  argv: string[];
  /** Adds a line to the http block that `nginx -t` refuses. */
  breakConfig(): void;
  repairConfig(): void;
  stop(): void;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export async function startNginx(): Promise<TestNginx> {
  const dir = mkdtempSync(join(tmpdir(), 'cw-nginx-'));
  const tlsDir = join(dir, 'tls');
  mkdirSync(tlsDir);
  mkdirSync(join(dir, 'logs'));
  const certPath = join(tlsDir, 'fullchain.pem');
  const keyPath = join(tlsDir, 'privkey.pem');
  // nginx refuses to start without a certificate: a throwaway one stands until the first deploy.
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      keyPath,
      '-out',
      certPath,
      '-days',
      '1',
      '-subj',
      '/CN=placeholder',
    ],
    { stdio: 'pipe' },
  );
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  const extra = join(dir, 'extra.conf');
  writeFileSync(extra, '');
  const user = process.getuid?.() === 0 ? 'user nobody nogroup;\n' : '';
  writeFileSync(
    conf,
    `${user}daemon on;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/logs/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  include ${extra};
  server {
    listen 127.0.0.1:${port} ssl;
    ssl_certificate ${certPath};
    ssl_certificate_key ${keyPath};
    location / { return 200 "ok\\n"; }
  }
}
`,
  );
  const argv = ['nginx', '-p', dir, '-c', conf, '-e', join(dir, 'logs', 'error.log')];
  execFileSync(argv[0]!, argv.slice(1), { stdio: 'pipe' });
  return {
    dir,
    port,
    tlsDir,
    certPath,
    keyPath,
    argv,
    breakConfig: () => writeFileSync(extra, 'this_is_not_a_directive on;\n'),
    repairConfig: () => writeFileSync(extra, ''),
    stop() {
      try {
        const pid = Number(readFileSync(join(dir, 'nginx.pid'), 'utf8').trim());
        if (pid > 0) process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
    },
  };
}
