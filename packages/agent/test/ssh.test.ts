/**
 * The SSH connector against a real OpenSSH sshd started by the test on a loopback port: files
 * pushed over SFTP with modes and backups, a failing remote validation restored, and a host key
 * other than the pinned one refused before anything is written.
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKUP_SUFFIX, type ConnectorTarget, SshConnector } from '../src/index.js';
import { freePort } from './support/nginx.js';
import { issueLeaf } from './support/servers.js';

const SSHD = '/usr/sbin/sshd';
let dir: string;
let port: number;
let hostKey: string;
let remote: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cw-sshd-'));
  remote = join(dir, 'remote');
  mkdirSync(remote);
  const keygen = (file: string) =>
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, file)]);
  keygen('host_key');
  keygen('client_key');
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(join(dir, 'client_key.pub')));
  hostKey = execFileSync('ssh-keygen', ['-lf', join(dir, 'host_key.pub')], { encoding: 'utf8' }).split(
    ' ',
  )[1]!;
  port = await freePort();
  writeFileSync(
    join(dir, 'sshd_config'),
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${join(dir, 'host_key')}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      'StrictModes no',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin prohibit-password',
      'UsePAM no',
      'Subsystem sftp internal-sftp',
      '',
    ].join('\n'),
  );
  if (process.getuid?.() === 0) mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  execFileSync(SSHD, ['-f', join(dir, 'sshd_config'), '-E', join(dir, 'sshd.log')]);
  for (let i = 0; i < 50 && !existsSync(join(dir, 'sshd.pid')); i++)
    await new Promise((r) => setTimeout(r, 100));
}, 60_000);

afterAll(() => {
  try {
    process.kill(Number(readFileSync(join(dir, 'sshd.pid'), 'utf8')), 'SIGTERM');
  } catch {
    // not started
  }
});

const connector = (validate?: string[]) =>
  new SshConnector({
    privateKey: readFileSync(join(dir, 'client_key')),
    allowedDirs: [remote],
    ...(validate ? { validateCommand: validate } : {}),
  });

const target = (extra: Record<string, unknown> = {}): ConnectorTarget => ({
  id: 'tg-ssh',
  name: 'remote web',
  type: 'SSH',
  config: {
    host: '127.0.0.1',
    port,
    username: userInfo().username,
    host_key_sha256: hostKey,
    cert_path: join(remote, 'site.pem'),
    key_path: join(remote, 'site.key'),
    ...extra,
  },
});

const material = (p: ReturnType<typeof issueLeaf>) => ({
  versionId: 'v',
  serialNumber: '',
  certPem: p.certPem,
  chainPem: p.chainPem,
  privateKeyPem: p.keyPem,
});

describe('SSH connector with a real sshd', { timeout: 120_000 }, () => {
  it('pushes the files over SFTP with their modes, keeping a backup, and verifies them', async () => {
    const c = connector(['test', '-s', join(remote, 'site.pem')]);
    expect(await c.testConnection(target())).toMatchObject({ writable: true, host_key: hostKey });
    const first = issueLeaf();
    await c.deploy(target(), material(first));
    const second = issueLeaf();
    await c.deploy(target(), material(second));
    expect(readFileSync(join(remote, 'site.pem'), 'utf8')).toBe(
      `${second.certPem.trimEnd()}\n${second.chainPem.trimEnd()}\n`,
    );
    expect(statSync(join(remote, 'site.key')).mode & 0o777).toBe(0o600);
    expect(statSync(join(remote, 'site.pem')).mode & 0o777).toBe(0o644);
    expect(readFileSync(join(remote, `site.pem${BACKUP_SUFFIX}`), 'utf8')).toContain(first.certPem.trim());
    expect((await c.verify(target())).ok).toBe(true);
    expect(readdirSync(remote).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('restores the previous files when the remote validation fails, naming its output', async () => {
    const before = readFileSync(join(remote, 'site.pem'), 'utf8');
    const c = connector(['sh', '-c', 'echo "config check refused it" >&2; exit 3']);
    await expect(c.deploy(target(), material(issueLeaf()))).rejects.toThrow(
      /validation failed: .*exit code 3.*config check refused it.*previous certificate was restored/s,
    );
    expect(readFileSync(join(remote, 'site.pem'), 'utf8')).toBe(before);
  });

  it('refuses a host whose key is not the pinned one, writing nothing', async () => {
    const before = readFileSync(join(remote, 'site.pem'), 'utf8');
    const other = `SHA256:${'A'.repeat(43)}`;
    await expect(
      connector().deploy(target({ host_key_sha256: other }), material(issueLeaf())),
    ).rejects.toThrow('is not the pinned one');
    expect(readFileSync(join(remote, 'site.pem'), 'utf8')).toBe(before);
  });

  it('refuses remote paths outside the allowed directories or with ..', async () => {
    await expect(
      connector().deploy(target({ cert_path: '/etc/ssl/x.pem' }), material(issueLeaf())),
    ).rejects.toThrow('outside the allowed directories');
    await expect(
      connector().deploy(target({ cert_path: `${remote}/../x.pem` }), material(issueLeaf())),
    ).rejects.toThrow('must not contain . or ..');
  });
});
