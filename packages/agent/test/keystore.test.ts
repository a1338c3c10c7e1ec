/**
 * The JavaKeystore connector writes a PKCS#12 keystore that keytool opens with the target's
 * password, under the alias, with the deployed serial; a failing reload restores the previous
 * keystore; and the password never reaches a command line or an error.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ConnectorTarget, JavaKeystoreConnector } from '../src/index.js';
import { issueLeaf } from './support/servers.js';

const PASSWORD = 'keystore-secret-42';

function keytoolList(path: string): string {
  return execFileSync(
    'keytool',
    ['-list', '-v', '-keystore', path, '-storetype', 'PKCS12', '-storepass:env', 'KS_PW'],
    {
      env: { ...process.env, KS_PW: PASSWORD },
      encoding: 'utf8',
    },
  );
}

const serialOf = (pem: string) =>
  execFileSync('openssl', ['x509', '-noout', '-serial'], { input: pem, encoding: 'utf8' })
    .trim()
    .replace(/^serial=/, '')
    .replace(/^0+/, '')
    .toLowerCase();

describe('JavaKeystore connector', { timeout: 120_000 }, () => {
  it('writes a PKCS#12 keystore keytool reads back, then restores it when the reload fails', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cw-keystore-'));
    const path = join(dir, 'server.p12');
    const target: ConnectorTarget = {
      id: 'tg-ks',
      name: 'tomcat',
      type: 'JavaKeystore',
      config: { keystore_path: path, password: PASSWORD, alias: 'tomcat' },
    };
    const first = issueLeaf();
    const ok = new JavaKeystoreConnector({ allowedDirs: [dir] });
    await ok.deploy(target, {
      versionId: 'v1',
      serialNumber: '',
      certPem: first.certPem,
      chainPem: first.chainPem,
      privateKeyPem: first.keyPem,
    });
    const listed = keytoolList(path);
    expect(listed).toContain('Alias name: tomcat');
    expect(listed).toContain('PrivateKeyEntry');
    expect(listed).toContain('Certificate chain length: 2');
    expect(listed.toLowerCase()).toContain(`serial number: ${serialOf(first.certPem)}`);
    expect(statSync(path).mode & 0o777).toBe(0o600);

    const before = readFileSync(path);
    const failing = new JavaKeystoreConnector({ allowedDirs: [dir], reloadCommand: ['false'] });
    const second = issueLeaf();
    const attempt = failing.deploy(target, {
      versionId: 'v2',
      serialNumber: '',
      certPem: second.certPem,
      chainPem: second.chainPem,
      privateKeyPem: second.keyPem,
    });
    await expect(attempt).rejects.toThrow(/reload failed: .*previous keystore was restored/);
    await attempt.catch((e: Error) => expect(e.message).not.toContain(PASSWORD));
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it('refuses a short password and a path outside the allowed directories', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cw-keystore-'));
    const c = new JavaKeystoreConnector({ allowedDirs: [dir] });
    const leaf = issueLeaf();
    const m = {
      versionId: 'v',
      serialNumber: '',
      certPem: leaf.certPem,
      chainPem: null,
      privateKeyPem: leaf.keyPem,
    };
    const base = { id: 't', name: 't', type: 'JavaKeystore' };
    await expect(
      c.deploy({ ...base, config: { keystore_path: join(dir, 'a.p12'), password: 'short' } }, m),
    ).rejects.toThrow('password must be at least 8 characters');
    await expect(
      c.deploy({ ...base, config: { keystore_path: '/tmp/../etc/x.p12', password: PASSWORD } }, m),
    ).rejects.toThrow('outside the allowed directories');
  });
});
