/**
 * Traefik (file provider) and Envoy (path-based SDS): no server binary is available to run, so
 * the connectors' own read-back is what validates. These tests parse what was written with an
 * independent reader (the yaml package / JSON.parse), check the pair, and show that a write the
 * read-back refuses is rolled back to the previous files.
 */
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type ConnectorTarget, envoyConnector, fingerprint256, traefikConnector } from '../src/index.js';
import { issueLeaf, type TestPki } from './support/servers.js';

const material = (p: TestPki, v: string) => ({
  versionId: v,
  serialNumber: '',
  certPem: p.certPem,
  chainPem: p.chainPem,
  privateKeyPem: p.keyPem,
});

const spki = (pem: string, key = false) =>
  (key ? createPublicKey(createPrivateKey(pem)) : new X509Certificate(pem).publicKey)
    .export({ type: 'spki', format: 'der' })
    .toString('hex');

describe('Traefik file-provider connector', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cw-traefik-'));
  const connector = traefikConnector({ allowedDirs: [dir] });
  const target: ConnectorTarget = {
    id: 'tg-traefik',
    name: 'edge',
    type: 'Traefik',
    config: {
      config_path: join(dir, 'certwright.yaml'),
      cert_path: join(dir, 'edge.crt'),
      key_path: join(dir, 'edge.key'),
      stores: ['default'],
    },
  };

  it('writes tls.certificates naming the new files, and replaces them on the next deployment', async () => {
    const first = issueLeaf();
    const outcome = await connector.deploy(target, material(first, 'v1'));
    expect(outcome.files).toEqual([
      join(dir, 'edge.key'),
      join(dir, 'edge.crt'),
      join(dir, 'certwright.yaml'),
    ]);
    const doc = parse(readFileSync(join(dir, 'certwright.yaml'), 'utf8'));
    expect(doc).toEqual({
      tls: {
        certificates: [
          { certFile: join(dir, 'edge.crt'), keyFile: join(dir, 'edge.key'), stores: ['default'] },
        ],
      },
    });
    expect(spki(readFileSync(join(dir, 'edge.key'), 'utf8'), true)).toBe(spki(first.certPem));
    expect(statSync(join(dir, 'edge.key')).mode & 0o777).toBe(0o600);

    const second = issueLeaf();
    await connector.deploy(target, material(second, 'v2'));
    expect(fingerprint256(readFileSync(join(dir, 'edge.crt'), 'utf8'))).toBe(fingerprint256(second.certPem));
    expect(await connector.verify(target, { fingerprint256: fingerprint256(second.certPem) })).toMatchObject({
      ok: true,
    });
    expect(await connector.verify(target, { fingerprint256: fingerprint256(first.certPem) })).toMatchObject({
      ok: false,
      detail: 'the written certificate is not the one deployed',
    });
  });

  it('rolls back when the read-back fails, leaving the previous files', async () => {
    const before = {
      crt: readFileSync(join(dir, 'edge.crt'), 'utf8'),
      key: readFileSync(join(dir, 'edge.key'), 'utf8'),
      yaml: readFileSync(join(dir, 'certwright.yaml'), 'utf8'),
    };
    // A target whose key file is the certificate file: the read-back finds a key that is no key.
    const broken = { ...target, config: { ...target.config, key_path: join(dir, 'edge.crt') } };
    await expect(connector.deploy(broken, material(issueLeaf(), 'v3'))).rejects.toThrow(
      /validation failed: the written private key does not parse; the previous certificate was restored/,
    );
    expect(readFileSync(join(dir, 'edge.crt'), 'utf8')).toBe(before.crt);
    expect(readFileSync(join(dir, 'edge.key'), 'utf8')).toBe(before.key);
    expect(readFileSync(join(dir, 'certwright.yaml'), 'utf8')).toBe(before.yaml);
    expect(existsSync(join(dir, 'certwright.yaml.certwright-journal'))).toBe(false);
  });

  it('refuses paths outside the allowed directories and a bad store name', async () => {
    await expect(
      connector.deploy(
        { ...target, config: { ...target.config, config_path: '/etc/traefik.yaml' } },
        material(issueLeaf(), 'v'),
      ),
    ).rejects.toThrow('config_path is outside the allowed directories');
    await expect(
      connector.deploy(
        { ...target, config: { ...target.config, stores: ['a b'] } },
        material(issueLeaf(), 'v'),
      ),
    ).rejects.toThrow('stores must list TLS store names');
  });
});

describe.each(['sds.yaml', 'sds.json'])('Envoy SDS connector (%s)', (file) => {
  const dir = mkdtempSync(join(tmpdir(), 'cw-envoy-'));
  const connector = envoyConnector({ allowedDirs: [dir] });
  const target: ConnectorTarget = {
    id: 'tg-envoy',
    name: 'mesh',
    type: 'Envoy',
    config: { sds_path: join(dir, file), secret_name: 'edge_cert' },
  };
  const read = () => {
    const text = readFileSync(join(dir, file), 'utf8');
    return file.endsWith('.json') ? JSON.parse(text) : parse(text);
  };

  it('writes one tls.v3.Secret resource with the chain and key inline, mode 0600', async () => {
    const leaf = issueLeaf();
    await connector.deploy(target, material(leaf, 'v1'));
    const doc = read();
    expect(doc.resources).toHaveLength(1);
    const secret = doc.resources[0];
    expect(secret['@type']).toBe('type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret');
    expect(secret.name).toBe('edge_cert');
    expect(secret.tls_certificate.certificate_chain.inline_string).toBe(leaf.certPem + leaf.chainPem);
    expect(spki(secret.tls_certificate.private_key.inline_string, true)).toBe(spki(leaf.certPem));
    expect(statSync(join(dir, file)).mode & 0o777).toBe(0o600);
    expect((await connector.verify(target)).ok).toBe(true);
  });

  it('puts the previous file back when the write fails', async () => {
    const before = readFileSync(join(dir, file), 'utf8');
    const failing = envoyConnector({
      allowedDirs: [dir],
      writer: () => {
        throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
      },
    });
    await expect(failing.deploy(target, material(issueLeaf(), 'v2'))).rejects.toThrow(
      'writing the files failed: ENOSPC; the previous certificate was restored',
    );
    expect(readFileSync(join(dir, file), 'utf8')).toBe(before);
  });

  it('reports a hand-edited file that no longer names the secret', async () => {
    writeFileSync(join(dir, file), file.endsWith('.json') ? '{"resources":[]}' : 'resources: []\n');
    expect(await connector.verify(target)).toEqual({
      ok: false,
      detail: `${join(dir, file)} has no secret named edge_cert`,
    });
  });
});
