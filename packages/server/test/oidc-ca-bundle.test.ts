import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { readOidcCaBundle } from '../src/start.js';
import { makeTestPki } from './support/openssl-pki.js';
import { runServer } from './support/server-process.js';

describe('SVC_OIDC_CA_BUNDLE_PATH', () => {
  const pki = makeTestPki([]);

  it('adds every certificate of the bundle to the system roots', async () => {
    const pem = readFileSync(pki.ca, 'utf8');
    const bundle = join(pki.dir, 'two.pem');
    writeFileSync(bundle, `# private CAs\n${pem}\n${pem}`);
    const anchors = await readOidcCaBundle(bundle);
    expect(anchors.length).toBe(rootCertificates.length + 2);
    expect(anchors.slice(0, rootCertificates.length)).toEqual([...rootCertificates]);
    expect(anchors.at(-1)?.trim()).toBe(pem.trim());
  });

  it('refuses a missing file, a file without certificates, and a certificate that does not parse', async () => {
    await expect(readOidcCaBundle(join(pki.dir, 'absent.pem'))).rejects.toMatchObject({
      code: 'config_invalid',
      message: expect.stringMatching(/^SVC_OIDC_CA_BUNDLE_PATH: cannot read .*\(ENOENT\)$/),
    });
    const empty = join(pki.dir, 'empty.pem');
    writeFileSync(empty, 'no certificates here\n');
    await expect(readOidcCaBundle(empty)).rejects.toThrow(
      /SVC_OIDC_CA_BUNDLE_PATH: .* holds no PEM certificate/,
    );
    const broken = join(pki.dir, 'broken.pem');
    writeFileSync(broken, '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    await expect(readOidcCaBundle(broken)).rejects.toThrow(/does not parse/);
  });

  it('stops the server process at start-up, naming the variable, when the bundle cannot be used', async () => {
    const tls = makeTestPki(['server']);
    const proc = runServer({
      SVC_LISTEN_ADDR: '127.0.0.1',
      SVC_PORT: '0',
      SVC_TLS_CERT_PATH: tls.issued.server!.cert,
      SVC_TLS_KEY_PATH: tls.issued.server!.key,
      SVC_AUTH_SECRET: 'oidc-ca-bundle-secret-0123456789',
      SVC_OIDC_CA_BUNDLE_PATH: join(pki.dir, 'absent.pem'),
    });
    expect(await proc.exited).not.toBe(0);
    expect(proc.output()).toMatch(/SVC_OIDC_CA_BUNDLE_PATH: cannot read/);
  }, 180_000);
});
