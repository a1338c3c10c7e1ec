import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { readOidcCaBundle } from '../src/start.js';
import { makeTestPki } from './support/openssl-pki.js';

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
});
