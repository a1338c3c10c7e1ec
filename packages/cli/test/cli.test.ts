/**
 * `certwright` as an operator runs it: a subprocess against a real certwright-server over TLS 1.3
 * on 127.0.0.1, its stdout, stderr and exit codes.
 */
import { execFile, execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '@certwright/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  API_KEY,
  startStubServer,
  startTestServer,
  type TestServer,
} from '../../client/test/support/server.js';
import { EXIT } from '../src/index.js';

const BIN = fileURLToPath(new URL('../src/bin.ts', import.meta.url));

let server: TestServer;
let dir: string;
beforeAll(async () => {
  server = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), 'cw-cli-'));
  writeFileSync(join(dir, 'key'), `${API_KEY}\n`);
});
afterAll(() => server?.stop());

interface Run {
  code: number;
  out: string;
  err: string;
}

function cli(args: string[], env: Record<string, string> = {}, input?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', BIN, ...args],
      {
        encoding: 'utf8',
        env: {
          PATH: process.env.PATH ?? '',
          HOME: dir,
          SVC_SERVER_URL: server.url,
          SVC_API_KEY_FILE: join(dir, 'key'),
          SVC_SERVER_CA_BUNDLE_PATH: server.caPath,
          ...env,
        },
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, out: stdout, err: stderr });
      },
    );
    child.stdin?.end(input ?? '');
  });
}

function run(command: string, args: string[]): Promise<Run> {
  return new Promise((resolve) =>
    execFile(command, args, { encoding: 'utf8' }, (error, out, err) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, out, err }),
    ),
  );
}

/** Exactly one line on stderr, prefixed, and nothing that looks like a stack trace. */
function oneLineError(run: Run): string {
  const lines = run.err.trimEnd().split('\n');
  expect(lines, run.err).toHaveLength(1);
  expect(lines[0]).toMatch(/^certwright: /);
  expect(run.err).not.toMatch(/\n\s+at /);
  return lines[0] as string;
}

const owner = [
  '--owner-id',
  'own-default',
  '--team-id',
  'team-default',
  '--renewal-policy-id',
  'rp-default',
  '--issuer-id',
  'iss-local',
];

describe('certwright against a real server', () => {
  let tag: string;
  const ids: string[] = [];

  it('creates certificates and prints them as JSON', async () => {
    tag = `cli-${process.pid}`;
    for (const i of [0, 1, 2]) {
      const run = await cli([
        'certs',
        'create',
        '--name',
        `${tag}-${i}`,
        '--common-name',
        `${tag}-${i}.example.test`,
        ...owner,
        '-o',
        'json',
      ]);
      expect(run.code, run.err).toBe(EXIT.ok);
      const created = JSON.parse(run.out);
      expect(created).toMatchObject({ name: `${tag}-${i}`, status: 'Pending' });
      ids.push(created.id);
    }
  });

  it('lists with filters as an aligned table, as JSON and as YAML, and fetches every page with --all', async () => {
    const table = await cli([
      'certs',
      'list',
      '--search',
      tag,
      '--status',
      'Pending,Active,Failed',
      '--status',
      'RenewalInProgress',
    ]);
    expect(table.code, table.err).toBe(EXIT.ok);
    const [header, ...rows] = table.out.trimEnd().split('\n');
    expect(header).toMatch(/^ID\s+NAME\s+COMMON_NAME\s+STATUS/);
    expect(
      rows.filter((r) => r.includes(tag)),
      table.out,
    ).toHaveLength(3);
    expect(table.out).toMatch(/page 1 of 1 · 3 total/);
    // References show the name of what they reference, not its id.
    expect(header).toMatch(/\sOWNER\s+TEAM\s/);
    expect(rows.find((r) => r.includes(tag))).toMatch(/\sDefault owner\s+Default team\s/);
    expect(table.out).not.toContain('own-default');

    const columns = await cli(['certs', 'list', '--search', tag, '--columns', 'name,owner,status']);
    expect(columns.out.split('\n')[0]).toMatch(/^NAME\s+OWNER\s+STATUS$/);
    expect(columns.out.split('\n')[1]).toMatch(/\sDefault owner\s/);
    const jsonpath = await cli([
      'certs',
      'list',
      '--search',
      tag,
      '-o',
      'jsonpath={range .data[*]}{.name}{"\\n"}{end}',
    ]);
    expect(jsonpath.out.trimEnd().split('\n').sort()).toEqual([0, 1, 2].map((i) => `${tag}-${i}`));

    const json = await cli(['certificates', 'list', '--search', tag, '--per-page', '2', '-o', 'json']);
    expect(JSON.parse(json.out)).toMatchObject({ total: 3, per_page: 2, page: 1 });

    const all = await cli(['certs', 'list', '--search', tag, '--per-page', '2', '--all', '--output', 'json']);
    expect(all.err).toBe('');
    expect((JSON.parse(all.out) as { id: string }[]).map((c) => c.id).sort()).toEqual([...ids].sort());

    const yaml = await cli(['certs', 'get', ids[0] as string, '-o', 'yaml']);
    expect(yaml.code).toBe(EXIT.ok);
    expect(yaml.out).toContain(`id: ${ids[0]}`);
  });

  it('issues, renews with --wait and exports the PEM with --out', async () => {
    const create = await cli([
      'certs',
      'create',
      '--name',
      `${tag}-issued`,
      '--common-name',
      `${tag}.example.test`,
      ...owner,
      '-o',
      'json',
    ]);
    const id = JSON.parse(create.out).id as string;
    // The server's issuance worker issues Pending certificates itself, so `issue` may find the
    // certificate issued already (409); either way --wait returns once it is no longer pending.
    const issued = await cli(['certs', 'issue', id, '--key-algorithm', 'ECDSA-P256', '--wait', '-o', 'json']);
    if (issued.code === EXIT.ok) expect(JSON.parse(issued.out)).toMatchObject({ id, status: 'Active' });
    else expect(oneLineError(issued)).toMatch(/409 .*(Active|RenewalInProgress)/);
    const client = createClient({ baseUrl: server.url, apiKey: API_KEY, caBundlePath: server.caPath });
    try {
      while ((await client.getCertificate({ path: { id } })).status !== 'Active') {
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    } finally {
      await client.close();
    }
    const renewed = await cli(['certs', 'renew', id, '--wait', '-o', 'json']);
    expect(renewed.code, renewed.err).toBe(EXIT.ok);
    expect(JSON.parse(renewed.out)).toMatchObject({ id, status: 'Active' });
    // Not a terminal: no progress drawn on stderr.
    expect(renewed.err).toBe('');
    const out = join(dir, 'issued.pem');
    const exported = await cli(['certs', 'export', id, '--out', out]);
    expect(exported.code, exported.err).toBe(EXIT.ok);
    expect(readFileSync(out, 'utf8')).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(exported.err).toMatch(/^wrote \d+ bytes \(application\/x-pem-file\) to /);

    // PKCS#12 under a password read from a file: never a value on the command line.
    const password = join(dir, 'p12-password');
    writeFileSync(password, 'correct horse battery\n');
    const p12 = join(dir, 'issued.p12');
    const bundle = await cli(['certs', 'export-pkcs12', id, '--password-file', password, '--out', p12]);
    expect(bundle.code, bundle.err).toBe(EXIT.ok);
    const opened = await run('openssl', ['pkcs12', '-in', p12, '-passin', `file:${password}`, '-nokeys']);
    expect(opened.code, opened.err).toBe(0);
    expect(opened.out).toMatch(/-----BEGIN CERTIFICATE-----/);
    const onTheLine = await cli(['certs', 'export-pkcs12', id, '--password', 'correct horse battery']);
    expect(onTheLine.code).toBe(EXIT.usage);
    const inBody = await cli([
      'certs',
      'export-pkcs12',
      id,
      '--body',
      '{"password":"correct horse battery"}',
    ]);
    expect(inBody.code).toBe(EXIT.usage);
    expect(oneLineError(inBody)).toMatch(/password in --body would be visible .* use --password-file/);
  });

  it('streams the audit export as NDJSON to stdout, or to --out, from a time given as a duration', async () => {
    const run = await cli(['audit', 'export', '--limit', '5', '--category', 'cert_lifecycle']);
    expect(run.code, run.err).toBe(EXIT.ok);
    const lines = run.out.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThanOrEqual(5);
    for (const line of lines) expect(JSON.parse(line)).toHaveProperty('action');

    const out = join(dir, 'audit.ndjson');
    const saved = await cli([
      'audit',
      'export',
      '--from',
      '1d',
      '--category',
      'cert_lifecycle',
      '--out',
      out,
    ]);
    expect(saved.code, saved.err).toBe(EXIT.ok);
    expect(saved.err).toMatch(/^wrote \d+ bytes \(application\/x-ndjson[^)]*\) to /);
    const events = readFileSync(out, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.some((e) => e.action === 'certificate_created')).toBe(true);
    const before = await cli([
      'audit',
      'export',
      '--from',
      '3d',
      '--to',
      'now-1d',
      '--category',
      'cert_lifecycle',
    ]);
    expect(before.code, before.err).toBe(EXIT.ok);
    expect(before.out).toBe('');
  });

  it('bulk operations list what would change and change nothing without --yes', async () => {
    const dry = await cli([
      'certs',
      'bulk-revoke',
      '--certificate-ids',
      ids.join(','),
      '--dry-run',
      '-o',
      'json',
    ]);
    expect(dry.code, dry.err).toBe(EXIT.ok);
    expect(
      (JSON.parse(dry.out) as { id: string; change: string }[]).map((r) => [r.id, r.change]).sort(),
    ).toEqual(ids.map((id) => [id, 'revoke']).sort());
    expect(dry.err).toMatch(/^would revoke 3 certificates; nothing changed \(--dry-run\)/);

    const unconfirmed = await cli([
      'certs',
      'bulk-revoke',
      '--certificate-ids',
      ids.join(','),
      '--reason',
      'superseded',
    ]);
    expect(unconfirmed.code).toBe(EXIT.usage);
    expect(unconfirmed.err).toMatch(/^would revoke 3 certificates\n/);
    expect(unconfirmed.err.trimEnd().split('\n').at(-1)).toMatch(
      /^certwright: certs bulk-revoke changes 3 certificate\(s\): pass --yes to go ahead, or --dry-run/,
    );
    const renew = await cli(['certs', 'bulk-renew', '--certificate-ids', ids.join(',')]);
    expect(renew.code).toBe(EXIT.usage);
    const reassign = await cli([
      'certs',
      'bulk-reassign',
      '--certificate-ids',
      ids.join(','),
      '--owner-id',
      'own-default',
    ]);
    // Every certificate has that owner already: nothing would change, so nothing is asked.
    expect(reassign.code, reassign.err).toBe(EXIT.ok);
    const client = createClient({ baseUrl: server.url, apiKey: API_KEY, caBundlePath: server.caPath });
    try {
      for (const id of ids)
        expect((await client.getCertificate({ path: { id } })).status, id).not.toBe('Revoked');
    } finally {
      await client.close();
    }
  });

  it('revokes in batches and sums the results', async () => {
    const run = await cli([
      'certs',
      'bulk-revoke',
      '--certificate-ids',
      ids.join(','),
      '--reason',
      'superseded',
      '--batch-size',
      '2',
      '--yes',
      '-o',
      'json',
    ]);
    expect(run.code, run.err).toBe(EXIT.ok);
    expect(JSON.parse(run.out)).toMatchObject({ total_matched: 3, total_failed: 0 });
  });

  it('lists retired agents with agents list --retired', async () => {
    const run = await cli(['agents', 'list', '--retired', '-o', 'json']);
    expect(run.code, run.err).toBe(EXIT.ok);
    expect(JSON.parse(run.out)).toMatchObject({ data: expect.any(Array), page: 1 });
  });

  it('reads its settings from a config file', async () => {
    const config = join(dir, 'config.yaml');
    writeFileSync(
      config,
      `server: ${server.url}\napi_key_file: ${join(dir, 'key')}\nca_bundle: ${server.caPath}\noutput: json\n`,
    );
    const run = await cli(['system', 'version', '--config', config], {
      SVC_SERVER_URL: '',
      SVC_API_KEY_FILE: '',
      SVC_SERVER_CA_BUNDLE_PATH: '',
    });
    expect(run.code, run.err).toBe(EXIT.ok);
    expect(JSON.parse(run.out)).toMatchObject({ version: expect.any(String) });
  });
});

describe('failures: one line on stderr and a distinct exit code', () => {
  it('not found → 4', async () => {
    const run = await cli(['certs', 'get', 'cert-does-not-exist']);
    expect(run.code).toBe(EXIT.notFound);
    expect(oneLineError(run)).toMatch(/404 .*request /);
  });

  it('wrong API key → 3', async () => {
    const run = await cli(['certs', 'list'], { SVC_API_KEY_FILE: '', SVC_API_KEY: 'wrong-key-0123456789' });
    expect(run.code).toBe(EXIT.auth);
    oneLineError(run);
  });

  it('conflict → 5', async () => {
    const name = `rp-cli-${process.pid}`;
    const body = JSON.stringify({ name });
    const first = await cli(['renewal-policies', 'create', '--body', body]);
    expect(first.code, first.err).toBe(EXIT.ok);
    const again = await cli(['renewal-policies', 'create', '--body-file', '-'], {}, body);
    expect(again.code).toBe(EXIT.conflict);
    oneLineError(again);
  });

  it('invalid input the server refuses → 8, naming the field', async () => {
    const run = await cli([
      'certs',
      'create',
      '--name',
      'x',
      '--common-name',
      'x.example.test',
      ...owner,
      '--owner-id',
      'own-missing',
    ]);
    expect([EXIT.rejected, EXIT.notFound]).toContain(run.code);
    expect(oneLineError(run)).toMatch(/owner/);
  });

  it('usage errors → 2 with nothing sent: unknown flag, missing argument, missing required field, malformed JSON file', async () => {
    const stub = await startStubServer(() => ({ status: 500 }));
    const toStub = { SVC_SERVER_URL: stub.url, SVC_SERVER_CA_BUNDLE_PATH: stub.caPath };
    const missing = await cli(['certs', 'create', '--name', 'only-a-name'], toStub);
    expect(oneLineError(missing)).toMatch(
      /missing --common-name, --renewal-policy-id, --issuer-id, --owner-id, --team-id/,
    );
    const missingArgument = await cli(['certs', 'revoke'], toStub);
    expect(oneLineError(missingArgument)).toMatch(/missing <id>/);
    for (const args of [
      ['certs', 'list', '--no-such-flag'],
      ['certs', 'get'],
      ['certs', 'create', '--name', 'only-a-name'],
      ['certs', 'list', '--per-page', 'many'],
      ['certs', 'list', '-o', 'xml'],
    ]) {
      const run = await cli(args, toStub);
      expect(run.code, args.join(' ')).toBe(EXIT.usage);
      oneLineError(run);
    }
    writeFileSync(join(dir, 'bad.json'), '{"name": ');
    const bad = await cli(['certs', 'create', '--body-file', join(dir, 'bad.json')], toStub);
    expect(bad.code).toBe(EXIT.usage);
    expect(oneLineError(bad)).toMatch(/bad\.json is not valid JSON/);
    expect(stub.requests).toHaveLength(0);
    await stub.close();
  });

  it('http:// → 2 at start-up, naming the upgrade guide', async () => {
    const run = await cli(['certs', 'list'], {
      SVC_SERVER_URL: `http://127.0.0.1:${new URL(server.url).port}`,
    });
    expect(run.code).toBe(EXIT.usage);
    expect(oneLineError(run)).toMatch(/docs\/clients\/https-upgrade\.md/);
  });

  it('an untrusted server certificate → 6, and the insecure switch works with a warning', async () => {
    const untrusted = await cli(['system', 'version'], { SVC_SERVER_CA_BUNDLE_PATH: server.otherCaPath });
    expect(untrusted.code).toBe(EXIT.connection);
    expect(oneLineError(untrusted)).toMatch(/not trusted.*SVC_SERVER_CA_BUNDLE_PATH/);

    const insecure = await cli(['system', 'version', '-o', 'json'], {
      SVC_SERVER_CA_BUNDLE_PATH: '',
      SVC_SERVER_TLS_INSECURE_SKIP_VERIFY: 'true',
    });
    expect(insecure.code, insecure.err).toBe(EXIT.ok);
    expect(insecure.err).toMatch(/^certwright: warning: TLS certificate verification is OFF/);
  });

  it('a server that is down → 6', async () => {
    const stub = await startStubServer(() => ({ status: 200 }));
    await stub.close();
    const run = await cli(['system', 'version'], {
      SVC_SERVER_URL: stub.url,
      SVC_SERVER_CA_BUNDLE_PATH: stub.caPath,
    });
    expect(run.code).toBe(EXIT.connection);
    expect(oneLineError(run)).toMatch(/ECONNREFUSED/);
  });
});

describe('shell completion', () => {
  it('prints a bash script that bash accepts, completing groups and commands', async () => {
    const run = await cli(['completion', 'bash']);
    expect(run.code).toBe(EXIT.ok);
    expect(run.out).toContain('complete -F _certwright certwright');
    expect(run.out).toMatch(/certs\)\n\s+if .*compgen -W "[^"]*bulk-revoke/);
    const script = join(dir, 'completion.bash');
    writeFileSync(script, run.out);
    const check = await new Promise<number>((resolve) =>
      execFile('bash', ['-n', script], (error) => resolve(error ? 1 : 0)),
    );
    expect(check).toBe(0);
    expect((await cli(['completion', 'tcsh'])).code).toBe(EXIT.usage);
  });

  it('prints a fish script that fish loads, completing groups, commands and flags', async () => {
    const script = join(dir, 'certwright.fish');
    const printed = await cli(['completion', 'fish']);
    expect(printed.code).toBe(EXIT.ok);
    writeFileSync(script, printed.out);
    const complete = (line: string) =>
      run('fish', ['--no-config', '-c', `source ${script}; complete -C '${line}'`]);
    expect((await complete('certwright certs bulk-')).out.trimEnd().split('\n')).toEqual([
      'bulk-reassign',
      'bulk-renew',
      'bulk-revoke',
    ]);
    expect((await complete('certwright certs bulk-revoke --dry')).out.trim()).toBe('--dry-run');
    expect((await complete('certwright certificate www.example.com --not')).out.trim()).toBe('--not-after');
  });
});

describe('agents retire --force without --reason', () => {
  it('is refused before anything is sent; with a reason the request goes out', async () => {
    const stub = await startStubServer(() => ({ status: 204 }));
    try {
      const env = { SVC_SERVER_URL: stub.url, SVC_SERVER_CA_BUNDLE_PATH: stub.caPath };
      const refused = await cli(['agents', 'retire', 'agent-1', '--force'], env);
      expect(refused.code).toBe(EXIT.usage);
      expect(oneLineError(refused)).toMatch(/--force needs --reason/);
      expect(stub.requests).toHaveLength(0);

      const sent = await cli(['agents', 'retire', 'agent-1', '--force', '--reason', 'host gone'], env);
      expect(sent.code, sent.err).toBe(EXIT.ok);
      expect(stub.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
        'DELETE /api/v1/agents/agent-1?force=true&reason=host+gone',
      ]);
    } finally {
      await stub.close();
    }
  });
});

describe('one command from a name to a key and a certificate', () => {
  let root: string;
  beforeAll(async () => {
    root = join(dir, 'local-ca.pem');
    const chain = await cli(['issuers', 'get-chain', 'iss-local', '--out', root]);
    expect(chain.code, chain.err).toBe(EXIT.ok);
  });

  it('certificate makes the key here, and writes key, certificate and chain that openssl verifies', async () => {
    const crt = join(dir, 'www.crt');
    const key = join(dir, 'www.key');
    const made = await cli([
      'certificate',
      'www.oneshot.example.test',
      crt,
      key,
      '--san',
      'www.oneshot.example.test,oneshot.example.test',
      '--san',
      '127.0.0.1',
      '--not-after',
      '720h',
      '-o',
      'json',
    ]);
    expect(made.code, made.err).toBe(EXIT.ok);
    const result = JSON.parse(made.out);
    expect(result).toMatchObject({
      common_name: 'www.oneshot.example.test',
      certificate_file: crt,
      chain_file: join(dir, 'www.chain.crt'),
      key_file: key,
    });
    expect(statSync(key).mode & 0o777).toBe(0o600);
    const verified = await run('openssl', ['verify', '-CAfile', root, '-untrusted', result.chain_file, crt]);
    expect(verified.code, verified.err).toBe(0);
    expect(verified.out).toBe(`${crt}: OK\n`);
    // The key belongs to the certificate.
    const fromCert = await run('openssl', ['x509', '-in', crt, '-noout', '-pubkey']);
    const fromKey = await run('openssl', ['pkey', '-in', key, '-pubout']);
    expect(fromKey.out).toBe(fromCert.out);
    const text = (await run('openssl', ['x509', '-in', crt, '-noout', '-text'])).out;
    expect(text).toMatch(
      /DNS:www\.oneshot\.example\.test, DNS:oneshot\.example\.test, IP Address:127\.0\.0\.1/,
    );
    const cert = new X509Certificate(readFileSync(crt));
    expect(Math.round((Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 86_400_000)).toBe(30);
    // The server's record: the key never went there.
    const record = JSON.parse((await cli(['certs', 'get', result.certificate_id, '-o', 'json'])).out);
    expect(record).toMatchObject({ status: 'Active', owner_id: 'own-default', source: 'API' });

    const again = await cli(['certificate', 'www.oneshot.example.test', crt, key]);
    expect(again.code).toBe(EXIT.usage);
    expect(oneLineError(again)).toMatch(/exist: pass --force to replace/);
    const missing = await cli(['certificate', 'only-a-subject']);
    expect(oneLineError(missing)).toMatch(/missing <crt>, <key>/);
  });

  it('sign has a CSR made elsewhere signed and writes certificate and chain', async () => {
    const csr = join(dir, 'device.csr');
    const made = await run('openssl', [
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      join(dir, 'device.key'),
      '-subj',
      '/CN=device.oneshot.example.test',
      '-addext',
      'subjectAltName=DNS:device.oneshot.example.test',
      '-out',
      csr,
    ]);
    expect(made.code, made.err).toBe(0);
    const crt = join(dir, 'device.pem');
    const signed = await cli(['sign', csr, crt, '--bundle', '--not-after', '7d']);
    expect(signed.code, signed.err).toBe(EXIT.ok);
    expect(signed.out).toMatch(/^certificate_id\s+mc-/);
    const verified = await run('openssl', [
      'verify',
      '-CAfile',
      root,
      '-untrusted',
      join(dir, 'device.chain.pem'),
      crt,
    ]);
    expect(verified.code, verified.err).toBe(0);
    // --bundle: the chain follows the certificate in the same file.
    expect(readFileSync(crt, 'utf8').match(/BEGIN CERTIFICATE/g)?.length).toBeGreaterThan(1);
    const fromCert = await run('openssl', ['x509', '-in', crt, '-noout', '-pubkey']);
    const fromKey = await run('openssl', ['pkey', '-in', join(dir, 'device.key'), '-pubout']);
    expect(fromKey.out).toBe(fromCert.out);

    writeFileSync(
      join(dir, 'garbage.csr'),
      '-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n',
    );
    const refused = await cli(['sign', join(dir, 'garbage.csr'), join(dir, 'garbage.crt')]);
    expect(refused.code).toBe(EXIT.usage);
    expect(oneLineError(refused)).toMatch(/garbage\.csr is not a usable CSR/);
  });

  it('lists by expiry with --expires-within', async () => {
    const soon = await cli([
      'certs',
      'list',
      '--search',
      'oneshot.example.test',
      '--expires-within',
      '31d',
      '-o',
      'json',
    ]);
    expect(soon.code, soon.err).toBe(EXIT.ok);
    expect((JSON.parse(soon.out).data as { name: string }[]).map((c) => c.name).sort()).toEqual([
      'device.oneshot.example.test',
      'www.oneshot.example.test',
    ]);
    const sooner = await cli([
      'certs',
      'list',
      '--search',
      'oneshot.example.test',
      '--expires-within',
      '8d',
      '-o',
      'json',
    ]);
    expect((JSON.parse(sooner.out).data as { name: string }[]).map((c) => c.name)).toEqual([
      'device.oneshot.example.test',
    ]);
  });
});

describe('certificate when the issuance worker came first', () => {
  it('renews the record with its CSR, says so, and writes the key it made with that certificate', async () => {
    const ca = join(dir, 'race-ca.pem');
    const caKey = join(dir, 'race-ca.key');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-subj',
        '/CN=Race CA',
        '-keyout',
        caKey,
        '-out',
        ca,
        '-days',
        '2',
      ],
      { stdio: 'ignore' },
    );
    const stub = await startStubServer((request) => {
      if (request.url === '/api/v1/certificates')
        return {
          status: 201,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ id: 'mc-race', name: 'race.example.test' }),
        };
      if (request.url.endsWith('/issue')) return { status: 409 };
      const csr = join(dir, 'race.csr');
      writeFileSync(csr, JSON.parse(request.body).csr_pem);
      const cert = execFileSync(
        'openssl',
        ['x509', '-req', '-in', csr, '-CA', ca, '-CAkey', caKey, '-days', '1', '-copy_extensions', 'copy'],
        { encoding: 'utf8' },
      );
      const version = {
        id: 'cv-2',
        serial_number: '02',
        not_after: '2026-12-31T00:00:00Z',
        cert_pem: cert,
        chain_pem: readFileSync(ca, 'utf8'),
      };
      return {
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          certificate: { id: 'mc-race', status: 'Active' },
          job: { id: 'jb-1', type: 'Renewal', status: 'Completed' },
          version,
        }),
      };
    });
    try {
      const crt = join(dir, 'race.crt');
      const key = join(dir, 'race.key');
      const made = await cli(['certificate', 'race.example.test', crt, key], {
        SVC_SERVER_URL: stub.url,
        SVC_SERVER_CA_BUNDLE_PATH: stub.caPath,
      });
      expect(made.code, made.err).toBe(EXIT.ok);
      expect(made.err).toMatch(
        /^certwright: warning: the server issued mc-race with a key of its own before this request; renewed it with this CSR\n$/,
      );
      expect(stub.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
        'POST /api/v1/certificates',
        'POST /api/v1/certificates/mc-race/issue',
        'POST /api/v1/certificates/mc-race/renew',
      ]);
      const fromCert = await run('openssl', ['x509', '-in', crt, '-noout', '-pubkey']);
      const fromKey = await run('openssl', ['pkey', '-in', key, '-pubout']);
      expect(fromKey.out).toBe(fromCert.out);
      expect((await run('openssl', ['verify', '-CAfile', ca, crt])).code).toBe(0);
    } finally {
      await stub.close();
    }
  });
});
