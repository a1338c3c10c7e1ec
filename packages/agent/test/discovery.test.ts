import { X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scanForCertificates } from '../src/index.js';
import { issueLeaf } from './support/servers.js';

describe('scanForCertificates', () => {
  it('finds PEM bundles and DER files, skips keys, junk, other extensions and symlinks', () => {
    const leaf = issueLeaf();
    const der = new X509Certificate(leaf.certPem).raw;
    const root = mkdtempSync(join(tmpdir(), 'cw-scan-'));
    mkdirSync(join(root, 'nested', 'deeper'), { recursive: true });
    writeFileSync(join(root, 'bundle.pem'), leaf.certPem + leaf.chainPem);
    writeFileSync(join(root, 'nested', 'deeper', 'leaf.der'), der);
    writeFileSync(join(root, 'key.pem'), leaf.keyPem);
    writeFileSync(join(root, 'junk.crt'), 'not a certificate');
    writeFileSync(join(root, 'notes.txt'), leaf.certPem);
    symlinkSync(join(root, 'bundle.pem'), join(root, 'link.pem'));
    const found = scanForCertificates([root, join(root, 'missing')]);
    expect(found.map((f) => `${f.path.slice(root.length)} ${f.subject}`).sort()).toEqual([
      '/bundle.pem CN=deploy test CA',
      '/bundle.pem CN=localhost',
      '/nested/deeper/leaf.der CN=localhost',
    ]);
    expect(found.find((f) => f.path.endsWith('leaf.der'))?.subject_alt_names).toEqual(['DNS:localhost']);
    expect(JSON.stringify(found)).not.toContain('PRIVATE KEY');
  });
});
