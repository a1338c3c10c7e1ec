/**
 * Debian apache2 and haproxy started by the tests on free loopback ports with their own
 * configuration and runtime directories, plus throwaway certificates to deploy to them.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './nginx.js';

export interface TestPki {
  certPem: string;
  keyPem: string;
  chainPem: string;
}

/** A CA-signed leaf for localhost; each call makes a new key and serial. */
export function issueLeaf(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'cw-leaf-'));
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  ssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=deploy test CA',
  );
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=DNS:localhost\n');
  ssl('req', ...ec, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=localhost');
  ssl(
    'x509',
    '-req',
    '-in',
    'leaf.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'leaf.pem',
    '-days',
    '2',
    '-extfile',
    'ext.cnf',
  );
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  return { certPem: read('leaf.pem'), keyPem: read('leaf.key'), chainPem: read('ca.pem') };
}

export interface TestServerProcess {
  dir: string;
  port: number;
  tlsDir: string;
  validate: string[];
  reload: string[];
  breakConfig(): void;
  repairConfig(): void;
  stop(): void;
}

function writeInitial(tlsDir: string, files: Record<string, string>): void {
  for (const [name, content] of Object.entries(files))
    writeFileSync(join(tlsDir, name), content, { mode: 0o600 });
}

function killPidFile(path: string): void {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    if (pid > 0) process.kill(pid, 'SIGTERM');
  } catch {
    // already gone
  }
}

const runAs = () => (process.getuid?.() === 0 ? 'User nobody\nGroup nogroup\n' : '');

export async function startApache(initial: TestPki): Promise<TestServerProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'cw-apache-'));
  const tlsDir = join(dir, 'tls');
  mkdirSync(tlsDir);
  writeInitial(tlsDir, {
    'cert.pem': initial.certPem,
    'chain.pem': initial.chainPem,
    'key.pem': initial.keyPem,
  });
  const port = await freePort();
  const mods = '/usr/lib/apache2/modules';
  const conf = join(dir, 'httpd.conf');
  const extra = join(dir, 'extra.conf');
  writeFileSync(extra, '');
  writeFileSync(
    conf,
    `LoadModule mpm_event_module ${mods}/mod_mpm_event.so
LoadModule authz_core_module ${mods}/mod_authz_core.so
LoadModule socache_shmcb_module ${mods}/mod_socache_shmcb.so
LoadModule ssl_module ${mods}/mod_ssl.so
${runAs()}ServerName localhost
ServerRoot ${dir}
DefaultRuntimeDir ${dir}
PidFile ${dir}/httpd.pid
ErrorLog ${dir}/error.log
Mutex file:${dir} default
Listen 127.0.0.1:${port}
Include ${extra}
<VirtualHost 127.0.0.1:${port}>
  SSLEngine on
  SSLCertificateFile ${tlsDir}/cert.pem
  SSLCertificateChainFile ${tlsDir}/chain.pem
  SSLCertificateKeyFile ${tlsDir}/key.pem
</VirtualHost>
`,
  );
  const base = ['apache2', '-f', conf];
  execFileSync(base[0]!, [...base.slice(1), '-k', 'start'], { stdio: 'pipe' });
  return {
    dir,
    port,
    tlsDir,
    validate: [...base, '-t'],
    reload: [...base, '-k', 'graceful'],
    breakConfig: () => writeFileSync(extra, 'NotAnApacheDirective on\n'),
    repairConfig: () => writeFileSync(extra, ''),
    stop: () => killPidFile(join(dir, 'httpd.pid')),
  };
}

export async function startHaproxy(initial: TestPki): Promise<TestServerProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'cw-haproxy-'));
  const tlsDir = join(dir, 'tls');
  mkdirSync(tlsDir);
  writeInitial(tlsDir, { 'site.pem': initial.certPem + initial.chainPem + initial.keyPem });
  const port = await freePort();
  const conf = join(dir, 'haproxy.cfg');
  const pid = join(dir, 'haproxy.pid');
  const write = (extra: string) =>
    writeFileSync(
      conf,
      `global
  daemon
  pidfile ${pid}
${extra}
defaults
  mode http
  timeout connect 5s
  timeout client 5s
  timeout server 5s
frontend fe
  bind 127.0.0.1:${port} ssl crt ${tlsDir}/site.pem
  http-request return status 200 content-type text/plain string ok
`,
    );
  write('');
  execFileSync('haproxy', ['-f', conf, '-p', pid, '-D'], { stdio: 'pipe' });
  return {
    dir,
    port,
    tlsDir,
    validate: ['haproxy', '-c', '-f', conf],
    // A soft reload: a new process takes the port, the old one finishes its connections.
    reload: ['sh', '-c', `exec haproxy -f '${conf}' -p '${pid}' -D -sf $(cat '${pid}')`],
    breakConfig: () => write('  not_a_haproxy_keyword on'),
    repairConfig: () => write(''),
    stop: () => killPidFile(pid),
  };
}
