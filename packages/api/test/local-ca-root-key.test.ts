import { execFileSync } from 'node:child_process';
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock, SYSTEM_ACTOR } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLifecycleApp, type LifecycleApp } from './lifecycle-support.js';

/**
 * The root key of a Local CA stays offline: never in the sealed config, handed over once by
 * the create call when asked, and the hierarchy is constrained to root → intermediate → leaf.
 * Chains and path lengths are judged by the installed openssl.
 */

const CERT_RE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g;
const KEY_RE = /-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----\n?/g;

let app: LifecycleApp;
const dir = mkdtempSync(join(tmpdir(), 'cw-root-key-'));
// openssl judges validity against the real time: run the service clock at the real time too.
const clock = new ManualClock(new Date());

beforeAll(async () => {
  app = await createLifecycleApp({ clock, pki: { publicBaseUrl: 'https://pki.example.test:8443' } });
});
afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

const file = (name: string, content: string | Uint8Array) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
/** openssl's exit status and combined output (a failed verify is an answer, not an error). */
function openssl(args: string[]): { code: number; out: string } {
  try {
    return { code: 0, out: execFileSync('openssl', args, { cwd: dir, encoding: 'utf8', stdio: 'pipe' }) };
  } catch (error) {
    const e = error as { status?: number; stdout?: string; stderr?: string };
    return { code: e.status ?? -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

const spkiOf = (key: string) =>
  createPublicKey(createPrivateKey(key)).export({ type: 'spki', format: 'der' }).toString('hex');
const certSpki = (pem: string) =>
  new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' }).toString('hex');

/** Every private key in the issuer's stored config, read back and unsealed. */
async function storedKeys(issuerId: string): Promise<string[]> {
  const stored = await app.storage.issuers.getWithConfig(issuerId);
  return [...JSON.stringify(stored!.config).replaceAll('\\n', '\n').matchAll(KEY_RE)].map((m) => m[0]);
}

async function chainOf(issuerId: string): Promise<string[]> {
  const res = await app.call('GET', `/api/v1/issuers/${issuerId}/chain`);
  expect(res.status).toBe(200);
  return (await res.text()).match(CERT_RE)!;
}

async function issueCertificate(issuerId: string): Promise<{ id: string; pem: string }> {
  const cert = await app.createCertificate({ issuer_id: issuerId, profile_id: 'prof-default' });
  await app.services.pki.lifecycle.processDueJobs();
  const pem = await (await app.call('GET', `/api/v1/certificates/${cert.id}/export?format=pem`)).text();
  return { id: cert.id, pem: pem.match(CERT_RE)![0]! };
}
const issueLeaf = async (issuerId: string) => (await issueCertificate(issuerId)).pem;

const EXT = file(
  'ext.cnf',
  [
    '[ca_pathlen0]',
    'basicConstraints = critical, CA:TRUE, pathlen:0',
    'keyUsage = critical, keyCertSign, cRLSign, digitalSignature',
    'subjectKeyIdentifier = hash',
    'authorityKeyIdentifier = keyid:always',
    '[ca_unbounded]',
    'basicConstraints = critical, CA:TRUE',
    'keyUsage = critical, keyCertSign, cRLSign, digitalSignature',
    'subjectKeyIdentifier = hash',
    'authorityKeyIdentifier = keyid:always',
    '[leaf]',
    'basicConstraints = critical, CA:FALSE',
    'keyUsage = critical, digitalSignature',
    'extendedKeyUsage = serverAuth',
    'subjectAltName = DNS:sub.example.test',
    '',
  ].join('\n'),
);

/** A P-256 key and a certificate for it signed by `caCert`/`caKey` with openssl (extension section `ext`). */
function opensslSign(
  name: string,
  caCert: string,
  caKey: string,
  ext: string,
): { cert: string; key: string } {
  const out = openssl([
    'req',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-subj',
    `/O=certwright/CN=${name}`,
    '-out',
    `${name}.csr`,
  ]);
  expect(out.code, out.out).toBe(0);
  const signed = openssl([
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    file(`${name}-issuer.pem`, caCert),
    '-CAkey',
    file(`${name}-issuer.key`, caKey),
    '-set_serial',
    `0x${Buffer.from(name).toString('hex')}`,
    '-days',
    '30',
    '-extfile',
    EXT,
    '-extensions',
    ext,
    '-out',
    `${name}.pem`,
  ]);
  expect(signed.code, signed.out).toBe(0);
  return {
    cert: readFileSync(join(dir, `${name}.pem`), 'utf8'),
    key: readFileSync(join(dir, `${name}.key`), 'utf8'),
  };
}

// Key generation and several openssl runs per test: seconds on a loaded machine.
describe('Local CA root key', { timeout: 60_000 }, () => {
  it('is not stored when the CA is generated on first use (the default discards it)', async () => {
    const leaf = await issueLeaf(app.ids.issuer);
    const [issuing, root] = await chainOf(app.ids.issuer);
    expect(new X509Certificate(leaf).verify(new X509Certificate(issuing!).publicKey)).toBe(true);
    const stored = await app.storage.issuers.getWithConfig(app.ids.issuer);
    expect(stored!.config.ca).not.toHaveProperty('root_key_pem');
    // No key in the sealed config belongs to the root; the intermediate's does (it signs).
    const keys = (await storedKeys(app.ids.issuer)).map(spkiOf);
    expect(keys).not.toContain(certSpki(root!));
    expect(keys).toContain(certSpki(issuing!));
  });

  it("is returned once by the create call with root_private_key 'return', matches the root of the chain, and is stored nowhere", async () => {
    const res = await app.call('POST', '/api/v1/issuers', {
      name: 'Offline root CA',
      type: 'Local',
      root_private_key: 'return',
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const created = await res.json();
    expect(created.root_private_key_pem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    const [issuing, root] = await chainOf(created.id);
    expect(created.root_certificate_pem).toBe(root);
    expect(spkiOf(created.root_private_key_pem)).toBe(certSpki(root!));

    // Sealed config: the intermediate's key only.
    const keys = (await storedKeys(created.id)).map(spkiOf);
    expect(keys).toEqual([certSpki(issuing!)]);
    // Nor in any answer after the create, nor in the audit trail.
    const keyLine = created.root_private_key_pem.split('\n')[1];
    const got = await app.call('GET', `/api/v1/issuers/${created.id}`);
    const list = await app.call('GET', '/api/v1/issuers?per_page=500');
    const audit = await app.call('GET', '/api/v1/audit');
    expect([got.status, list.status, audit.status]).toEqual([200, 200, 200]);
    const auditText = await audit.text();
    expect(auditText).toContain(created.id);
    for (const text of [await got.text(), await list.text(), auditText]) {
      expect(text).not.toContain(keyLine);
      expect(text).not.toContain('root_private_key_pem');
    }
    // A later update answers the plain record.
    const updated = await app.json('PUT', `/api/v1/issuers/${created.id}`, {
      name: 'Offline root CA (renamed)',
    });
    expect(updated.status).toBe(200);
    expect(updated.body).not.toHaveProperty('root_private_key_pem');
  });

  it('refuses to return a root key it does not have (imported CA), with a 400 naming the field', async () => {
    const res = await app.json('POST', '/api/v1/issuers', {
      name: 'Imported with a root key request',
      type: 'Local',
      root_private_key: 'return',
      config: { certificate_pem: 'x', private_key_pem: 'y' },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { field: 'root_private_key', message: expect.stringMatching(/imported/) },
    ]);
    expect((await app.services.issuers.list({ per_page: 500 })).data.map((i) => i.name)).not.toContain(
      'Imported with a root key request',
    );
  });

  it('chains root → intermediate → leaf with path lengths 1 and 0 that openssl enforces', async () => {
    const created = await app.services.issuers.create(SYSTEM_ACTOR, {
      name: 'Path length CA',
      type: 'Local',
      root_private_key: 'return',
    });
    const leaf = await issueLeaf(created.id);
    const [issuing, root] = await chainOf(created.id);
    const rootText = openssl(['x509', '-in', file('pl-root.pem', root!), '-noout', '-text']).out;
    expect(rootText).toMatch(/X509v3 Basic Constraints: critical\s+CA:TRUE, pathlen:1/);
    const issuingText = openssl(['x509', '-in', file('pl-issuing.pem', issuing!), '-noout', '-text']).out;
    expect(issuingText).toMatch(/X509v3 Basic Constraints: critical\s+CA:TRUE, pathlen:0/);

    const verify = (name: string, untrusted: string, target: string) =>
      openssl([
        'verify',
        '-x509_strict',
        '-CAfile',
        file('pl-root.pem', root!),
        '-untrusted',
        file(`${name}-untrusted.pem`, untrusted),
        file(`${name}-target.pem`, target),
      ]);
    const ok = verify('pl-leaf', issuing!, leaf);
    expect(ok.code, ok.out).toBe(0);
    expect(ok.out).toContain(': OK');

    // A CA below the intermediate breaks its pathlen:0 …
    const issuingKey = (await storedKeys(created.id)).find((k) => spkiOf(k) === certSpki(issuing!))!;
    const subCa = opensslSign('sub-ca', issuing!, issuingKey, 'ca_unbounded');
    const subLeaf = opensslSign('sub-leaf', subCa.cert, subCa.key, 'leaf');
    const deep = verify('pl-deep', issuing! + subCa.cert, subLeaf.cert);
    expect(deep.code).not.toBe(0);
    expect(deep.out).toMatch(/path length constraint exceeded/);

    // … and the root's pathlen:1 holds even under an intermediate signed without a constraint.
    const loose = opensslSign('loose-int', root!, created.root_private_key_pem!, 'ca_unbounded');
    const looseSub = opensslSign('loose-sub', loose.cert, loose.key, 'ca_unbounded');
    const looseLeaf = opensslSign('loose-leaf', looseSub.cert, looseSub.key, 'leaf');
    const tooDeep = verify('pl-loose', loose.cert + looseSub.cert, looseLeaf.cert);
    expect(tooDeep.code).not.toBe(0);
    expect(tooDeep.out).toMatch(/path length constraint exceeded/);
  });

  it('lets the offline root sign a new intermediate that a new Local issuer imports and issues under (CA rotation)', async () => {
    const created = await app.services.issuers.create(SYSTEM_ACTOR, {
      name: 'Rotating root CA',
      type: 'Local',
      root_private_key: 'return',
    });
    const root = created.root_certificate_pem!;
    const [oldIssuing] = await chainOf(created.id);
    const before = await issueCertificate(created.id);
    // What docs/operations/ca-rotation.md tells the operator to run, offline.
    const next = opensslSign('rotated-issuing', root, created.root_private_key_pem!, 'ca_pathlen0');
    const rotated = await app.json('POST', '/api/v1/issuers', {
      name: 'Rotating root CA, issuing 2',
      type: 'Local',
      config: { certificate_pem: next.cert, private_key_pem: next.key, chain_pem: root },
    });
    expect(rotated.status).toBe(201);
    const leaf = await issueLeaf(rotated.body.id);
    expect(await chainOf(rotated.body.id)).toEqual([next.cert, root]);
    const ok = openssl([
      'verify',
      '-x509_strict',
      '-purpose',
      'sslserver',
      '-CAfile',
      file('rot-root.pem', root),
      '-untrusted',
      file('rot-issuing.pem', next.cert),
      file('rot-leaf.pem', leaf),
    ]);
    expect(ok.code, ok.out).toBe(0);

    // The certificate moves to the new issuer (its renewals go there); the old CA keeps
    // publishing the status of what it signed: revoked now, listed by the old CA's CRL.
    const moved = await app.json('PUT', `/api/v1/certificates/${before.id}`, { issuer_id: rotated.body.id });
    expect(moved.status).toBe(200);
    const revoked = await app.json('POST', `/api/v1/certificates/${before.id}/revoke`, {
      reason: 'superseded',
    });
    expect(revoked.status).toBe(200);
    const crl = await app.call('GET', `/.well-known/pki/crl/${created.id}`);
    expect(crl.status).toBe(200);
    const crlCheck = openssl([
      'verify',
      '-crl_check',
      '-CAfile',
      file('rot-old-root.pem', root),
      '-untrusted',
      file('rot-old-issuing.pem', oldIssuing!),
      '-CRLfile',
      file('rot-old.crl', Buffer.from(await crl.arrayBuffer())),
      file('rot-old-leaf.pem', before.pem),
    ]);
    expect(crlCheck.code).not.toBe(0);
    expect(crlCheck.out).toMatch(/certificate revoked/);
  });

  it('removes a root key an earlier release stored: on the first use of the issuer, on an update, and at start-up', async () => {
    // Configs as earlier releases wrote them: the generated CA with its root key beside it.
    const donor = await app.services.issuers.create(SYSTEM_ACTOR, {
      name: 'Legacy donor',
      type: 'Local',
      root_private_key: 'return',
    });
    const { config } = (await app.storage.issuers.getWithConfig(donor.id))!;
    const legacyConfig = {
      ...config,
      ca: { ...(config.ca as object), root_key_pem: donor.root_private_key_pem },
    };
    const rootSpki = spkiOf(donor.root_private_key_pem!);
    const firstUse = await app.storage.issuers.create({
      name: 'Legacy used',
      type: 'Local',
      config: legacyConfig,
    });
    const updated = await app.storage.issuers.create({
      name: 'Legacy updated',
      type: 'Local',
      config: legacyConfig,
    });
    const atStart = await app.storage.issuers.create({
      name: 'Legacy at start',
      type: 'Local',
      config: legacyConfig,
    });
    expect((await storedKeys(firstUse.id)).map(spkiOf)).toContain(rootSpki);

    // First use: the CRL route builds the connector.
    const crl = await app.call('GET', `/.well-known/pki/crl/${firstUse.id}`);
    expect(crl.status).toBe(200);
    const afterUse = await app.storage.issuers.getWithConfig(firstUse.id);
    expect(afterUse!.config.ca).not.toHaveProperty('root_key_pem');
    expect((await storedKeys(firstUse.id)).map(spkiOf)).not.toContain(rootSpki);
    // The CA itself is untouched: same intermediate, still issuing.
    expect((afterUse!.config.ca as Record<string, unknown>).issuing_key_pem).toBe(
      (config.ca as Record<string, unknown>).issuing_key_pem,
    );
    await issueLeaf(firstUse.id);

    // An update that does not touch the config removes it too.
    await app.services.issuers.update(SYSTEM_ACTOR, updated.id, { name: 'Legacy updated (renamed)' });
    expect((await storedKeys(updated.id)).map(spkiOf)).not.toContain(rootSpki);
    expect((await app.storage.issuers.getWithConfig(updated.id))!.config.ca).toEqual(config.ca);

    // What the server runs at start-up: every issuer still holding one, and only those.
    expect(await app.services.issuers.removeRetiredState()).toEqual([atStart.id]);
    expect((await storedKeys(atStart.id)).map(spkiOf)).not.toContain(rootSpki);
    expect((await app.storage.issuers.getWithConfig(atStart.id))!.config.ca).toEqual(config.ca);
    expect(await app.services.issuers.removeRetiredState()).toEqual([]);
    const audit = await app.json('GET', '/api/v1/audit');
    expect(JSON.stringify(audit.body)).toContain('issuer_retired_state_removed');
  });
});
