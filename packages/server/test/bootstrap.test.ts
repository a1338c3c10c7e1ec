import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { ensureAdminKey, ensureBootstrapTls } from '../src/bootstrap.js';

const verify = (dir: string, leaf: string) =>
  spawnSync('openssl', ['verify', '-x509_strict', '-CAfile', join(dir, 'ca.pem'), leaf], {
    encoding: 'utf8',
  });

/** A leaf for `san` signed with the bootstrap CA's own key by the openssl CLI. */
function opensslLeaf(dir: string, name: string, san: string): string {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  ssl(
    'req',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    `${name}-key.pem`,
    '-out',
    `${name}.csr`,
    '-subj',
    `/CN=${name}`,
  );
  writeFileSync(join(dir, `${name}.cnf`), `subjectAltName=${san}\nextendedKeyUsage=serverAuth\n`);
  ssl(
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca-key.pem',
    '-CAcreateserial',
    '-out',
    `${name}.pem`,
    '-days',
    '1',
    '-extfile',
    `${name}.cnf`,
  );
  return join(dir, `${name}.pem`);
}

describe('quick-start bootstrap files', () => {
  it('makes a CA that can certify localhost, 127.0.0.1 and ::1 and nothing else', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'cw-bootstrap-')), 'bootstrap');
    const files = await ensureBootstrapTls(dir);
    expect(verify(dir, files.serverCertPath).status).toBe(0);
    const text = execFileSync('openssl', ['x509', '-in', files.caCertPath, '-noout', '-text'], {
      encoding: 'utf8',
    });
    expect(text).toMatch(/X509v3 Name Constraints: critical/);

    expect(verify(dir, opensslLeaf(dir, 'local', 'DNS:localhost,IP:127.0.0.1,IP:::1')).status).toBe(0);
    for (const [name, san] of [
      ['bank', 'DNS:bank.example'],
      ['lan', 'IP:192.168.0.1'],
      ['sub', 'DNS:www.localhost.example'],
    ]) {
      const refused = verify(dir, opensslLeaf(dir, name!, san!));
      expect(refused.status, san).not.toBe(0);
      expect(`${refused.stdout}${refused.stderr}`, san).toMatch(/permitted subtree|name constraint/i);
    }
  });

  it('writes every secret mode 0600 and agrees on one set of files when started at once', async () => {
    const data = mkdtempSync(join(tmpdir(), 'cw-bootstrap-race-'));
    const dir = join(data, 'bootstrap');
    const runs = await Promise.all([0, 1, 2, 3].map(() => ensureBootstrapTls(dir)));
    const keys = await Promise.all([0, 1, 2, 3].map(() => ensureAdminKey(join(data, 'admin-api-key'))));
    for (const secret of ['ca-key.pem', 'server-key.pem']) {
      expect(statSync(join(dir, secret)).mode & 0o777, secret).toBe(0o600);
    }
    expect(statSync(join(data, 'admin-api-key')).mode & 0o777).toBe(0o600);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^cwk_[A-Za-z0-9_-]{43}$/);
    expect(readFileSync(join(data, 'admin-api-key'), 'utf8')).toBe(`${keys[0]}\n`);
    // Whatever interleaving happened, the files on disk form one chain and one key pair.
    expect(new Set(runs.map((r) => r.serverCertPath)).size).toBe(1);
    expect(() =>
      createSecureContext({
        cert: readFileSync(runs[0]!.serverCertPath),
        key: readFileSync(runs[0]!.serverKeyPath),
      }),
    ).not.toThrow();
    expect(verify(dir, runs[0]!.serverCertPath).status).toBe(0);

    // A later start reuses them all.
    const before = readFileSync(join(dir, 'ca.pem'), 'utf8');
    await ensureBootstrapTls(dir);
    expect(readFileSync(join(dir, 'ca.pem'), 'utf8')).toBe(before);
  });

  it('re-issues a server certificate near its expiry for the same key', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'cw-bootstrap-renew-')), 'bootstrap');
    const files = await ensureBootstrapTls(dir);
    const first = readFileSync(files.serverCertPath, 'utf8');
    const key = readFileSync(files.serverKeyPath, 'utf8');
    await ensureBootstrapTls(dir, { now: new Date(Date.now() + 380 * 86_400_000) });
    expect(readFileSync(files.serverCertPath, 'utf8')).not.toBe(first);
    expect(readFileSync(files.serverKeyPath, 'utf8')).toBe(key);
    expect(() =>
      createSecureContext({
        cert: readFileSync(files.serverCertPath),
        key: readFileSync(files.serverKeyPath),
      }),
    ).not.toThrow();
  });
});
