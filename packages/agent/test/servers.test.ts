/**
 * The Apache, HAProxy, Caddy, Postfix and Dovecot connectors against the real servers: a deployment is served (checked
 * by a TLS handshake), a second one replaces it, and a broken configuration makes the third
 * roll back while the second keeps serving.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  apacheConnector,
  type ConnectorTarget,
  caddyConnector,
  type DeploymentConnector,
  dovecotConnector,
  type Endpoint,
  fingerprint256,
  haproxyConnector,
  postfixConnector,
  servedCertificate,
} from '../src/index.js';
import {
  issueLeaf,
  startApache,
  startCaddy,
  startDovecot,
  startHaproxy,
  startPostfix,
  type TestPki,
  type TestServerProcess,
} from './support/servers.js';

const material = (p: TestPki, v: string) => ({
  versionId: v,
  serialNumber: '',
  certPem: p.certPem,
  chainPem: p.chainPem,
  privateKeyPem: p.keyPem,
});

const started: TestServerProcess[] = [];
afterAll(() => {
  for (const s of started) s.stop();
});

interface Case {
  name: string;
  start(p: TestPki): Promise<TestServerProcess>;
  connector(s: TestServerProcess): DeploymentConnector;
  config(s: TestServerProcess): Record<string, unknown>;
  /** The file that holds the leaf. */
  certFile(s: TestServerProcess): string;
  error: string;
  /** How the test itself reads the served certificate. */
  endpoint?: Partial<Endpoint>;
}

const fullchainFiles = (s: TestServerProcess) => ({
  cert_path: join(s.tlsDir, 'fullchain.pem'),
  key_path: join(s.tlsDir, 'key.pem'),
  verify_port: s.port,
});

const cases: Case[] = [
  {
    name: 'Apache',
    start: startApache,
    connector: (s) =>
      apacheConnector({ allowedDirs: [s.tlsDir], validateCommand: s.validate, reloadCommand: s.reload }),
    config: (s) => ({
      cert_path: join(s.tlsDir, 'cert.pem'),
      chain_path: join(s.tlsDir, 'chain.pem'),
      key_path: join(s.tlsDir, 'key.pem'),
      verify_port: s.port,
    }),
    certFile: (s) => join(s.tlsDir, 'cert.pem'),
    error: 'NotAnApacheDirective',
  },
  {
    name: 'HAProxy',
    start: startHaproxy,
    connector: (s) =>
      haproxyConnector({ allowedDirs: [s.tlsDir], validateCommand: s.validate, reloadCommand: s.reload }),
    config: (s) => ({ cert_path: join(s.tlsDir, 'site.pem'), verify_port: s.port }),
    certFile: (s) => join(s.tlsDir, 'site.pem'),
    error: 'not_a_haproxy_keyword',
  },
  {
    name: 'Caddy',
    start: startCaddy,
    connector: (s) =>
      caddyConnector({ allowedDirs: [s.tlsDir], validateCommand: s.validate, reloadCommand: s.reload }),
    // Caddy picks the certificate by SNI; a handshake without one gets none.
    config: (s) => ({ ...fullchainFiles(s), verify_server_name: 'localhost' }),
    certFile: (s) => join(s.tlsDir, 'fullchain.pem'),
    error: 'not_a_caddy_directive',
    endpoint: { serverName: 'localhost' },
  },
  {
    name: 'Postfix',
    start: startPostfix,
    connector: (s) =>
      postfixConnector({ allowedDirs: [s.tlsDir], validateCommand: s.validate, reloadCommand: s.reload }),
    config: (s) => ({ ...fullchainFiles(s), verify_starttls: 'smtp' }),
    certFile: (s) => join(s.tlsDir, 'fullchain.pem'),
    // Postfix writes its diagnostics to the mail log (syslog), not to a pipe: only the command
    // and its exit status reach the failure reason.
    error: 'check failed \\(exit code 1\\)',
    endpoint: { starttls: 'smtp' },
  },
  {
    name: 'Dovecot',
    start: startDovecot,
    connector: (s) =>
      dovecotConnector({ allowedDirs: [s.tlsDir], validateCommand: s.validate, reloadCommand: s.reload }),
    config: fullchainFiles,
    certFile: (s) => join(s.tlsDir, 'fullchain.pem'),
    error: 'not_a_dovecot_setting',
  },
];

describe.each(cases)('$name connector with the real server', { timeout: 120_000 }, (c) => {
  it('deploys, redeploys, and rolls back on a broken configuration while the old certificate serves', async () => {
    const first = issueLeaf();
    const server = await c.start(first);
    started.push(server);
    const connector = c.connector(server);
    const target: ConnectorTarget = {
      id: 'tg-1',
      name: c.name,
      type: connector.type,
      config: c.config(server),
    };
    const served = () => servedCertificate({ host: '127.0.0.1', port: server.port, ...c.endpoint });

    expect(await connector.testConnection(target)).toEqual({ writable: true, configuration_valid: true });
    const second = issueLeaf();
    const outcome = await connector.deploy(target, material(second, 'v2'));
    expect(outcome.verification?.ok).toBe(true);
    expect((await served()).fingerprint256).toBe(fingerprint256(second.certPem));
    expect(statSync(c.certFile(server)).mode & 0o777).toBe(c.name === 'HAProxy' ? 0o600 : 0o644);

    const third = issueLeaf();
    const before = readFileSync(c.certFile(server), 'utf8');
    server.breakConfig();
    try {
      await expect(connector.deploy(target, material(third, 'v3'))).rejects.toThrow(
        new RegExp(`validation failed: .*${c.error}.*previous certificate was restored`, 's'),
      );
      expect(readFileSync(c.certFile(server), 'utf8')).toBe(before);
      expect((await served()).fingerprint256).toBe(fingerprint256(second.certPem));
    } finally {
      server.repairConfig();
    }
    expect((await connector.verify(target)).ok).toBe(true);
  });

  it('refuses a key that does not match, and a path outside the allowed directories, writing nothing', async () => {
    const server = started.at(-1)!;
    const connector = c.connector(server);
    const target: ConnectorTarget = {
      id: 'tg-1',
      name: c.name,
      type: connector.type,
      config: c.config(server),
    };
    const before = readFileSync(c.certFile(server), 'utf8');
    const a = issueLeaf();
    const b = issueLeaf();
    await expect(connector.deploy(target, { ...material(a, 'v'), privateKeyPem: b.keyPem })).rejects.toThrow(
      'the private key does not match the certificate',
    );
    await expect(
      connector.deploy(
        { ...target, config: { ...target.config, cert_path: '/etc/passwd' } },
        material(a, 'v'),
      ),
    ).rejects.toThrow('outside the allowed directories');
    expect(readFileSync(c.certFile(server), 'utf8')).toBe(before);
  });
});
