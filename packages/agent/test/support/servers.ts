/**
 * Debian apache2 and haproxy started by the tests on free loopback ports with their own
 * configuration and runtime directories, plus throwaway certificates to deploy to them.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
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

/**
 * Runs a command that leaves a daemon behind with its output in `log`: with pipes, the wait
 * would last as long as the daemon holds them.
 */
function startDaemon(
  argv: string[],
  log: string,
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): void {
  const fd = openSync(log, 'a');
  try {
    execFileSync(argv[0]!, argv.slice(1), { stdio: ['ignore', fd, fd], timeout: 60_000, ...options });
  } catch (error) {
    throw new Error(
      `${argv.join(' ')} failed: ${readFileSync(log, 'utf8').slice(-2000)} ${(error as Error).message}`,
    );
  } finally {
    closeSync(fd);
  }
}

/** A process-tree-free stop: each server here writes a pid file or has a stop command. */
function tryRun(argv: string[]): void {
  try {
    execFileSync(argv[0]!, argv.slice(1), { stdio: 'pipe', timeout: 30_000 });
  } catch {
    // already stopped
  }
}

/** Debian caddy with its admin API and one HTTPS site on loopback ports. */
export async function startCaddy(initial: TestPki): Promise<TestServerProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'cw-caddy-'));
  const tlsDir = join(dir, 'tls');
  mkdirSync(tlsDir);
  writeInitial(tlsDir, { 'fullchain.pem': initial.certPem + initial.chainPem, 'key.pem': initial.keyPem });
  const port = await freePort();
  const admin = await freePort();
  const conf = join(dir, 'Caddyfile');
  const write = (extra: string) =>
    writeFileSync(
      conf,
      `{
	admin 127.0.0.1:${admin}
	auto_https off
	storage file_system ${dir}/data
}
https://localhost:${port} {
	bind 127.0.0.1
	tls ${tlsDir}/fullchain.pem ${tlsDir}/key.pem
	respond "ok"
${extra}
}
`,
    );
  write('');
  // Caddy keeps its own state under $HOME/XDG directories; the test's directory, not root's.
  const env = {
    ...process.env,
    HOME: dir,
    XDG_DATA_HOME: join(dir, 'data'),
    XDG_CONFIG_HOME: join(dir, 'config'),
  };
  const pid = join(dir, 'caddy.pid');
  startDaemon(
    ['caddy', 'start', '--config', conf, '--adapter', 'caddyfile', '--pidfile', pid],
    join(dir, 'caddy.log'),
    {
      env,
      cwd: dir,
    },
  );
  return {
    dir,
    port,
    tlsDir,
    validate: ['caddy', 'validate', '--config', conf, '--adapter', 'caddyfile'],
    reload: [
      'caddy',
      'reload',
      '--force',
      '--config',
      conf,
      '--adapter',
      'caddyfile',
      '--address',
      `127.0.0.1:${admin}`,
    ],
    breakConfig: () => write('\tnot_a_caddy_directive on'),
    repairConfig: () => write(''),
    stop: () => killPidFile(pid),
  };
}

/**
 * A Postfix instance of its own (config_directory, queue_directory, data_directory in the
 * test's directory) with only smtpd on a loopback port, offering STARTTLS. Postfix's master
 * runs as root and its daemons as the `postfix` user, so the directory is made traversable.
 * There is no postlogd here: Postfix logs to syslog (absent, so dropped) and the commands
 * print their fatal errors on stderr.
 */
export async function startPostfix(initial: TestPki): Promise<TestServerProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'cw-postfix-'));
  chmodSync(dir, 0o755);
  const tlsDir = join(dir, 'tls');
  const etc = join(dir, 'etc');
  for (const d of [tlsDir, etc, join(dir, 'queue'), join(dir, 'data')]) mkdirSync(d);
  chownSync(join(dir, 'data'), Number(execFileSync('id', ['-u', 'postfix']).toString().trim()), -1);
  writeInitial(tlsDir, { 'fullchain.pem': initial.certPem + initial.chainPem, 'key.pem': initial.keyPem });
  const port = await freePort();
  const write = (extra: string) =>
    writeFileSync(
      join(etc, 'main.cf'),
      `compatibility_level = 3.6
queue_directory = ${dir}/queue
data_directory = ${dir}/data
mail_owner = postfix
setgid_group = postdrop
myhostname = localhost
mydomain = localdomain
myorigin = localhost
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mydestination =
relayhost =
alias_maps =
alias_database =
smtpd_peername_lookup = no
smtpd_tls_security_level = may
smtpd_tls_chain_files = ${tlsDir}/key.pem, ${tlsDir}/fullchain.pem
${extra}
`,
    );
  write('');
  writeFileSync(
    join(etc, 'master.cf'),
    `127.0.0.1:${port} inet n - n - - smtpd
pickup    unix n - n 60 1 pickup
cleanup   unix n - n - 0 cleanup
qmgr      unix n - n 300 1 qmgr
tlsmgr    unix - - n 1000? 1 tlsmgr
rewrite   unix - - n - - trivial-rewrite
bounce    unix - - n - 0 bounce
defer     unix - - n - 0 bounce
trace     unix - - n - 0 bounce
verify    unix - - n - 1 verify
flush     unix n - n 1000? 0 flush
proxymap  unix - - n - - proxymap
anvil     unix - - n - 1 anvil
scache    unix - - n - 1 scache
`.replace(/1000\?/g, '-'),
  );
  startDaemon(['postfix', '-c', etc, 'start'], join(dir, 'start.log'));
  return {
    dir,
    port,
    tlsDir,
    validate: ['postfix', '-c', etc, 'check'],
    reload: ['postfix', '-c', etc, 'reload'],
    breakConfig: () => write('not_a_postfix_line'),
    repairConfig: () => write(''),
    stop: () => tryRun(['postfix', '-c', etc, 'stop']),
  };
}

/** Dovecot with its own base_dir and configuration, IMAPS only, on a loopback port. */
export async function startDovecot(initial: TestPki): Promise<TestServerProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'cw-dovecot-'));
  chmodSync(dir, 0o755);
  const tlsDir = join(dir, 'tls');
  mkdirSync(tlsDir);
  writeInitial(tlsDir, { 'fullchain.pem': initial.certPem + initial.chainPem, 'key.pem': initial.keyPem });
  const port = await freePort();
  const conf = join(dir, 'dovecot.conf');
  const extra = join(dir, 'extra.conf');
  writeFileSync(extra, '');
  writeFileSync(
    conf,
    `base_dir = ${dir}/run
state_dir = ${dir}/state
instance_name = cw-test-${port}
protocols = imap
listen = 127.0.0.1
log_path = ${dir}/dovecot.log
ssl = required
ssl_cert = <${tlsDir}/fullchain.pem
ssl_key = <${tlsDir}/key.pem
mail_location = maildir:${dir}/mail/%u
passdb {
  driver = static
  args = nopassword=y
}
userdb {
  driver = static
  args = uid=nobody gid=nogroup home=${dir}/mail/%u
}
service imap-login {
  inet_listener imap {
    port = 0
  }
  inet_listener imaps {
    address = 127.0.0.1
    port = ${port}
    ssl = yes
  }
}
!include_try ${extra}
`,
  );
  startDaemon(['dovecot', '-c', conf], join(dir, 'start.log'));
  return {
    dir,
    port,
    tlsDir,
    validate: ['doveconf', '-c', conf, '-n'],
    reload: ['doveadm', '-c', conf, 'reload'],
    breakConfig: () => writeFileSync(extra, 'not_a_dovecot_setting = 1\n'),
    repairConfig: () => writeFileSync(extra, ''),
    stop: () => tryRun(['doveadm', '-c', conf, 'stop']),
  };
}
